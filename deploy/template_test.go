package deploy

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The SAM resource types, and the properties of each that this template
// may use, as the SAM and CloudFormation references name them. A key
// outside these sets is a typo or a property SAM does not know.
var known = map[string][]string{
	"AWS::Serverless::CapacityProvider": {
		"CapacityProviderName", "VpcConfig", "OperatorRole", "Tags", "PropagateTags",
		"InstanceRequirements", "ScalingConfig", "KmsKeyArn",
	},
	"AWS::Serverless::Function": {
		"Runtime", "Handler", "CodeUri", "Architectures", "MemorySize", "Timeout",
		"AutoPublishAlias", "LoggingConfig", "Environment", "Description",
		"CapacityProviderConfig", "FunctionScalingConfig", "Policies", "Events",
	},
}

var knownNested = map[string][]string{
	"VpcConfig":              {"SubnetIds", "SecurityGroupIds"},
	"InstanceRequirements":   {"Architectures", "AllowedTypes", "ExcludedTypes"},
	"ScalingConfig":          {"MaxVCpuCount", "AverageCPUUtilization"},
	"CapacityProviderConfig": {"Arn", "ExecutionEnvironmentMemoryGiBPerVCpu", "PerExecutionEnvironmentMaxConcurrency"},
	"FunctionScalingConfig":  {"MinExecutionEnvironments", "MaxExecutionEnvironments"},
	"LoggingConfig":          {"LogFormat", "ApplicationLogLevel", "SystemLogLevel", "LogGroup"},
	"Environment":            {"Variables"},
	"CodeUri":                {"Bucket", "Key", "Version"}, // or a path
}

// knownEvents are the event types the templates may use, with their
// properties, as SAM's event sources name them.
var knownEvents = map[string][]string{
	"SQS": {"Queue", "BatchSize", "Enabled", "FilterCriteria", "FunctionResponseTypes", "MaximumBatchingWindowInSeconds"},
}

// knownPolicies are the SAM policy templates the templates may use, with
// their parameters.
var knownPolicies = map[string][]string{
	"DynamoDBCrudPolicy":     {"TableName"},
	"DynamoDBReadPolicy":     {"TableName"},
	"SQSSendMessagePolicy":   {"QueueName"},
	"SSMParameterReadPolicy": {"ParameterName"},
}

// template is the parsed template.yaml, intrinsic functions in their JSON
// form ({"Ref": X}, {"Fn::GetAtt": [R, A]}, {"Fn::If": [...]}, ...).
type template struct {
	Version    string         `yaml:"AWSTemplateFormatVersion"`
	Transform  string         `yaml:"Transform"`
	Parameters map[string]any `yaml:"Parameters"`
	Conditions map[string]any `yaml:"Conditions"`
	Globals    map[string]any `yaml:"Globals"`
	Resources  map[string]struct {
		Type       string         `yaml:"Type"`
		Condition  string         `yaml:"Condition"`
		Properties map[string]any `yaml:"Properties"`
	} `yaml:"Resources"`
	Outputs map[string]any `yaml:"Outputs"`
}

func load(t *testing.T) template {
	t.Helper()
	b, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl template
	parse(t, "template.yaml", b, &tpl)
	return tpl
}

// parse decodes the YAML text b, named what, into v, intrinsic functions
// in their JSON form.
func parse(t *testing.T, what string, b []byte, v any) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s does not parse: %v", what, err)
	}
	if err := intrinsics(&doc); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := doc.Decode(v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// intrinsics rewrites the short forms (!Ref X, !GetAtt R.A, !If [...])
// into the mappings they stand for, so the tree decodes as plain YAML.
func intrinsics(n *yaml.Node) error {
	for _, c := range n.Content {
		if err := intrinsics(c); err != nil {
			return err
		}
	}
	if !strings.HasPrefix(n.Tag, "!") || strings.HasPrefix(n.Tag, "!!") {
		return nil
	}
	name := strings.TrimPrefix(n.Tag, "!")
	key := "Fn::" + name
	if name == "Ref" || name == "Condition" {
		key = name
	}
	arg := *n
	arg.Tag = ""
	arg.Style = 0
	if name == "GetAtt" && n.Kind == yaml.ScalarNode {
		res, attr, ok := strings.Cut(n.Value, ".")
		if !ok {
			return fmt.Errorf("line %d: !GetAtt %q is not Resource.Attribute", n.Line, n.Value)
		}
		arg = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: res},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: attr},
		}}
	} else if n.Kind == yaml.ScalarNode {
		arg.Tag = "!!str"
	}
	*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &arg,
	}}
	return nil
}

func TestTemplateShape(t *testing.T) {
	t.Parallel()
	checkShape(t, load(t))
}

// checkShape checks a template's version and transform, that every
// resource type, property, event and policy template is known, and what
// every function on a capacity provider needs.
func checkShape(t *testing.T, tpl template) {
	t.Helper()
	if tpl.Version != "2010-09-09" || tpl.Transform != "AWS::Serverless-2016-10-31" {
		t.Errorf("version %q, transform %q", tpl.Version, tpl.Transform)
	}
	for name, r := range tpl.Resources {
		allowed, ok := known[r.Type]
		if !ok {
			t.Errorf("%s: resource type %s not expected", name, r.Type)
			continue
		}
		checkKeys(t, name, r.Properties, allowed)
		if r.Condition != "" {
			if _, ok := tpl.Conditions[r.Condition]; !ok {
				t.Errorf("%s: condition %s not defined", name, r.Condition)
			}
		}
	}
	globals, _ := tpl.Globals["Function"].(map[string]any)
	if globals != nil {
		checkKeys(t, "Globals.Function", globals, known["AWS::Serverless::Function"])
	}
	for name, r := range tpl.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		fn := maps.Clone(globals)
		if fn == nil {
			fn = map[string]any{}
		}
		maps.Copy(fn, r.Properties)
		checkFunction(t, tpl, name, fn)
	}
}

// checkFunction checks a function's properties, Globals.Function's
// included: the runtime lmigo-pack's zips are built for, a published
// version, a capacity provider with bounds the platform takes, and a zip
// of the architecture the function and its instances run.
func checkFunction(t *testing.T, tpl template, name string, fn map[string]any) {
	t.Helper()
	if fn["Runtime"] != "provided.al2023" || fn["Handler"] != "bootstrap" {
		t.Errorf("%s: runtime %v, handler %v; want provided.al2023, bootstrap", name, fn["Runtime"], fn["Handler"])
	}
	if fn["AutoPublishAlias"] == nil {
		t.Errorf("%s: no AutoPublishAlias: managed instances run published versions only", name)
	}
	if m, ok := fn["MemorySize"].(int); ok && m < 2048 {
		t.Errorf("%s: MemorySize %d, want at least 2048", name, m)
	}
	cp, ok := fn["CapacityProviderConfig"].(map[string]any)
	if !ok || cp["Arn"] == nil {
		t.Errorf("%s: no CapacityProviderConfig.Arn", name)
	}
	if n, ok := cp["PerExecutionEnvironmentMaxConcurrency"].(int); ok && (n < 1 || n > 1600) {
		t.Errorf("%s: PerExecutionEnvironmentMaxConcurrency %d, want 1..1600", name, n)
	}
	if r, ok := cp["ExecutionEnvironmentMemoryGiBPerVCpu"].(int); ok && r != 2 && r != 4 && r != 8 {
		t.Errorf("%s: ExecutionEnvironmentMemoryGiBPerVCpu %d, want 2, 4 or 8", name, r)
	}
	checkEvents(t, name, fn["Events"])
	checkPolicies(t, name, fn["Policies"])
	// The zip, the function and the instances: one architecture.
	archs, _ := fn["Architectures"].([]any)
	arch, literal := firstAny(archs).(string)
	if !literal {
		return
	}
	goarch := map[string]string{"arm64": "arm64", "x86_64": "amd64"}[arch]
	if code, ok := fn["CodeUri"].(string); ok && strings.HasSuffix(code, ".zip") && !strings.HasSuffix(code, "-"+goarch+".zip") {
		t.Errorf("%s: CodeUri %s for %s, want lmigo-pack's NAME-%s.zip", name, code, arch, goarch)
	}
	ga, _ := cp["Arn"].(map[string]any)
	if provider, ok := tpl.Resources[firstOf(asStrings(ga["Fn::GetAtt"]))]; ok {
		ir, _ := provider.Properties["InstanceRequirements"].(map[string]any)
		pa, _ := ir["Architectures"].([]any)
		if _, literal := firstAny(pa).(string); literal && !slices.Equal(pa, archs) {
			t.Errorf("%s: Architectures %v, its capacity provider's %v", name, archs, pa)
		}
	}
}

// checkEvents checks each event's type and properties.
func checkEvents(t *testing.T, fn string, events any) {
	t.Helper()
	evs, _ := events.(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(evs)) {
		ev, _ := evs[name].(map[string]any)
		typ, _ := ev["Type"].(string)
		props, ok := knownEvents[typ]
		if !ok {
			t.Errorf("%s.Events.%s: type %v not expected", fn, name, ev["Type"])
			continue
		}
		p, _ := ev["Properties"].(map[string]any)
		checkKeys(t, fn+".Events."+name, p, props)
	}
}

// checkPolicies checks each policy template's name and parameters; a
// string is a managed policy's name or ARN.
func checkPolicies(t *testing.T, fn string, policies any) {
	t.Helper()
	list, ok := policies.([]any)
	if !ok && policies != nil {
		list = []any{policies}
	}
	for i, p := range list {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		for name, params := range m {
			allowed, ok := knownPolicies[name]
			if !ok {
				t.Errorf("%s.Policies[%d]: policy template %s not expected", fn, i, name)
				continue
			}
			pm, _ := params.(map[string]any)
			checkKeys(t, fmt.Sprintf("%s.Policies[%d].%s", fn, i, name), pm, allowed)
		}
	}
}

// checkKeys checks that the properties of what, and of the nested
// structures named in knownNested, are all known names.
func checkKeys(t *testing.T, what string, props map[string]any, allowed []string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: unknown property %s", what, k)
			continue
		}
		if sub, ok := knownNested[k]; ok {
			m, ok := props[k].(map[string]any)
			if _, path := props[k].(string); !ok && k == "CodeUri" && path {
				continue
			}
			if !ok {
				t.Errorf("%s.%s is not a mapping", what, k)
				continue
			}
			checkKeys(t, what+"."+k, m, sub)
		}
	}
}

// TestTemplateCapacityProvider: one capacity provider, in the given
// subnets, on instances of the chosen architecture.
func TestTemplateCapacityProvider(t *testing.T) {
	t.Parallel()
	tpl := load(t)
	var names []string
	for name, r := range tpl.Resources {
		if r.Type == "AWS::Serverless::CapacityProvider" {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		t.Fatalf("capacity providers %v, want one", names)
	}
	p := tpl.Resources[names[0]].Properties
	vpc, _ := p["VpcConfig"].(map[string]any)
	if !isRef(vpc["SubnetIds"], "SubnetIds") {
		t.Errorf("VpcConfig.SubnetIds = %v, want !Ref SubnetIds", vpc["SubnetIds"])
	}
	ir, _ := p["InstanceRequirements"].(map[string]any)
	arch, _ := ir["Architectures"].([]any)
	if len(arch) != 1 || !isRef(arch[0], "Architecture") {
		t.Errorf("InstanceRequirements.Architectures = %v, want [!Ref Architecture]", ir["Architectures"])
	}
	allowed, _ := param(t, tpl, "Architecture")["AllowedValues"].([]any)
	if !slices.Equal(allowed, []any{"arm64", "x86_64"}) {
		t.Errorf("Architecture allows %v, want [arm64 x86_64]", allowed)
	}
}

// TestTemplateFunctions: a function per architecture, each on the
// capacity provider with the zip `make package` writes for it, N and the
// memory ratio from parameters bounded as the platform bounds them.
func TestTemplateFunctions(t *testing.T) {
	t.Parallel()
	tpl := load(t)
	tests := []struct {
		arch, goarch string
	}{
		{"arm64", "arm64"},
		{"x86_64", "amd64"},
	}
	for _, tt := range tests {
		t.Run(tt.arch, func(t *testing.T) {
			var found []string
			for name, r := range tpl.Resources {
				archs, _ := r.Properties["Architectures"].([]any)
				if r.Type == "AWS::Serverless::Function" && slices.Equal(archs, []any{tt.arch}) {
					found = append(found, name)
				}
			}
			if len(found) != 1 {
				t.Fatalf("functions for %s: %v, want one", tt.arch, found)
			}
			r := tpl.Resources[found[0]]
			if want := "../dist/bootstrap-" + tt.goarch + ".zip"; r.Properties["CodeUri"] != want {
				t.Errorf("CodeUri %v, want %s (make package)", r.Properties["CodeUri"], want)
			}
			// The architecture's, and only without a zip of the user's.
			cond, _ := tpl.Conditions[r.Condition].(map[string]any)
			and, _ := cond["Fn::And"].([]any)
			var eq []any
			if len(and) == 2 {
				first, _ := and[0].(map[string]any)
				eq, _ = first["Fn::Equals"].([]any)
			}
			if len(eq) != 2 || !isRef(eq[0], "Architecture") || eq[1] != tt.arch || !isCondition(and[1], "Reference") {
				t.Errorf("condition %s = %v, want !And [!Equals [!Ref Architecture, %s], !Condition Reference]", r.Condition, cond, tt.arch)
			}
			cp, _ := r.Properties["CapacityProviderConfig"].(map[string]any)
			if ga, _ := cp["Arn"].(map[string]any); !slices.Equal(asStrings(ga["Fn::GetAtt"]), []string{"CapacityProvider", "Arn"}) {
				t.Errorf("CapacityProviderConfig.Arn = %v, want !GetAtt CapacityProvider.Arn", cp["Arn"])
			}
			if !isRef(cp["PerExecutionEnvironmentMaxConcurrency"], "MaxConcurrency") {
				t.Errorf("PerExecutionEnvironmentMaxConcurrency = %v", cp["PerExecutionEnvironmentMaxConcurrency"])
			}
			if !isRef(cp["ExecutionEnvironmentMemoryGiBPerVCpu"], "MemoryGiBPerVCpu") {
				t.Errorf("ExecutionEnvironmentMemoryGiBPerVCpu = %v", cp["ExecutionEnvironmentMemoryGiBPerVCpu"])
			}
		})
	}
	n := param(t, tpl, "MaxConcurrency")
	if n["Type"] != "Number" || n["MinValue"] != 1 || n["MaxValue"] != 1600 {
		t.Errorf("MaxConcurrency %v, want a Number in 1..1600", n)
	}
	ratio, _ := param(t, tpl, "MemoryGiBPerVCpu")["AllowedValues"].([]any)
	if !slices.Equal(ratio, []any{2, 4, 8}) {
		t.Errorf("MemoryGiBPerVCpu allows %v, want [2 4 8]", ratio)
	}
}

// TestTemplateOwnZip: the user's own zip, named in S3 by CodeBucket and
// CodeKey, runs in a function of its own with the same N and memory
// ratio, and the reference functions step aside for it.
func TestTemplateOwnZip(t *testing.T) {
	t.Parallel()
	tpl := load(t)
	for _, name := range []string{"CodeBucket", "CodeKey"} {
		if p := param(t, tpl, name); p["Type"] != "String" || p["Default"] != "" {
			t.Errorf("parameter %s = %v, want a String defaulting to empty", name, p)
		}
	}
	own, ok := tpl.Resources["FunctionOwn"]
	if !ok || own.Type != "AWS::Serverless::Function" || own.Condition != "OwnZip" {
		t.Fatalf("FunctionOwn = %+v, want a function under condition OwnZip", own)
	}
	code, _ := own.Properties["CodeUri"].(map[string]any)
	if !isRef(code["Bucket"], "CodeBucket") || !isRef(code["Key"], "CodeKey") {
		t.Errorf("FunctionOwn CodeUri = %v, want {Bucket: !Ref CodeBucket, Key: !Ref CodeKey}", own.Properties["CodeUri"])
	}
	if archs, _ := own.Properties["Architectures"].([]any); len(archs) != 1 || !isRef(archs[0], "Architecture") {
		t.Errorf("FunctionOwn Architectures = %v, want [!Ref Architecture]", own.Properties["Architectures"])
	}
	cp, _ := own.Properties["CapacityProviderConfig"].(map[string]any)
	if !isRef(cp["PerExecutionEnvironmentMaxConcurrency"], "MaxConcurrency") || !isRef(cp["ExecutionEnvironmentMemoryGiBPerVCpu"], "MemoryGiBPerVCpu") {
		t.Errorf("FunctionOwn CapacityProviderConfig = %v, want N and the ratio from the parameters", cp)
	}
	for name, want := range map[string]string{"OwnZip": "Fn::Not", "Reference": "Fn::Equals"} {
		c, _ := tpl.Conditions[name].(map[string]any)
		if _, ok := c[want]; !ok {
			t.Errorf("condition %s = %v, want %s on CodeKey", name, c, want)
		}
	}
}

func isCondition(v any, name string) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 1 && m["Condition"] == name
}

// TestTemplateReferences: every !Ref names a parameter, a resource or a
// pseudo parameter, and every !GetAtt a resource.
func TestTemplateReferences(t *testing.T) {
	t.Parallel()
	checkReferences(t, load(t))
}

// checkReferences checks that every !Ref of tpl names a parameter, a
// resource or a pseudo parameter, and every !GetAtt a resource.
func checkReferences(t *testing.T, tpl template) {
	t.Helper()
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["Ref"].(string); ok && len(v) == 1 {
				_, isParam := tpl.Parameters[ref]
				_, isRes := tpl.Resources[ref]
				if !isParam && !isRes && !strings.HasPrefix(ref, "AWS::") {
					t.Errorf("%s: !Ref %s names nothing", path, ref)
				}
			}
			if ga, ok := v["Fn::GetAtt"]; ok {
				s := asStrings(ga)
				if _, isRes := tpl.Resources[firstOf(s)]; len(s) != 2 || !isRes {
					t.Errorf("%s: !GetAtt %v names no resource", path, ga)
				}
			}
			for k, c := range v {
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	for name, r := range tpl.Resources {
		walk("Resources."+name, r.Properties)
	}
	walk("Globals", tpl.Globals)
	walk("Outputs", tpl.Outputs)
	walk("Conditions", tpl.Conditions)
}

func param(t *testing.T, tpl template, name string) map[string]any {
	t.Helper()
	p, ok := tpl.Parameters[name].(map[string]any)
	if !ok {
		t.Fatalf("no parameter %s", name)
	}
	return p
}

func isRef(v any, name string) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 1 && m["Ref"] == name
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func firstAny(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestDocTemplates: the SAM template docs/deploy.md shows for a user's
// own function passes the checks template.yaml passes, and a fragment of
// a function's properties there names only properties SAM knows.
func TestDocTemplates(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	full := 0
	for _, bl := range yamlBlocks(string(b)) {
		what := fmt.Sprintf("docs/deploy.md:%d", bl.line)
		t.Run(what, func(t *testing.T) {
			var top map[string]any
			parse(t, what, []byte(bl.text), &top)
			if _, ok := top["Resources"]; !ok {
				checkKeys(t, what, top, known["AWS::Serverless::Function"])
				return
			}
			full++
			var tpl template
			parse(t, what, []byte(bl.text), &tpl)
			checkShape(t, tpl)
			checkReferences(t, tpl)
		})
	}
	if full == 0 {
		t.Error("docs/deploy.md shows no SAM template of a user's function")
	}
}

type block struct {
	line int // of the block's first line
	text string
}

// yamlBlocks returns the ```yaml blocks of a Markdown text.
func yamlBlocks(md string) []block {
	var blocks []block
	var cur *block
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```yaml":
			cur = &block{line: i + 2}
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	return blocks
}
