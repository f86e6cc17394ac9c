// Package sizing measures a user's function as N grows and recommends
// the settings of its Lambda Managed Instances environment:
// PerExecutionEnvironmentMaxConcurrency, ConcurrencyPerVCpu and
// ExecutionEnvironmentMemoryGiBPerVCpu (loadtest size).
//
//	p, err := sizing.Run(ctx, sizing.Options{Target: opts, Binary: bin, Items: items, VCPUs: 2,
//		ScaleAt: sizing.DefaultScaleAt, Step: 3 * time.Second, MaxTime: sizing.MaxProfile, MaxN: sizing.MaxN, Check: true})
//	sizing.Print(os.Stdout, p)
//
// # Contract
//
// Run sweeps N in fresh processes of the function (doubling, then halving
// the interval around the knee), fits its memory, recommends N from the
// knee and Erlang's loss formula at the load the capacity provider scales
// at, bounded by latency and memory, and checks the recommendation with
// arrivals at random; how it decides is in docs/tuning.md. It stops
// within MaxTime (3 minutes at most), never predicts a step above half
// the machine's free memory, and every process it starts has ended when
// it returns. The Profile it returns holds what was measured even with
// an error; Print and Markdown write it for people, and it marshals to
// the JSON of -json.
package sizing
