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
		"CapacityProviderConfig", "FunctionScalingConfig",
	},
}

var knownNested = map[string][]string{
	"VpcConfig":              {"SubnetIds", "SecurityGroupIds"},
	"InstanceRequirements":   {"Architectures", "AllowedTypes", "ExcludedTypes"},
	"ScalingConfig":          {"MaxVCpuCount", "AverageCPUUtilization"},
	"CapacityProviderConfig": {"Arn", "ExecutionEnvironmentMemoryGiBPerVCpu", "PerExecutionEnvironmentMaxConcurrency"},
	"FunctionScalingConfig":  {"MinExecutionEnvironments", "MaxExecutionEnvironments"},
	"LoggingConfig":          {"LogFormat", "ApplicationLogLevel", "SystemLogLevel", "LogGroup"},
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
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml does not parse: %v", err)
	}
	if err := intrinsics(&doc); err != nil {
		t.Fatal(err)
	}
	var tpl template
	if err := doc.Decode(&tpl); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return tpl
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
	tpl := load(t)
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
	fn, _ := tpl.Globals["Function"].(map[string]any)
	checkKeys(t, "Globals.Function", fn, known["AWS::Serverless::Function"])
	if fn["Runtime"] != "provided.al2023" || fn["Handler"] != "bootstrap" {
		t.Errorf("Globals.Function: runtime %v, handler %v; want provided.al2023, bootstrap", fn["Runtime"], fn["Handler"])
	}
	if fn["AutoPublishAlias"] == nil {
		t.Error("Globals.Function: no AutoPublishAlias: managed instances run published versions only")
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
	tpl := load(t)
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

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
