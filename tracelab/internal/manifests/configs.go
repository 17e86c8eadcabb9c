package manifests

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ConfigTools are the real programs that read the telemetry stack's
// configuration files, at the versions of the images the pods run. Tempo's
// is not among them: it is AGPL-3.0, so the lab checks its configuration
// in-process (CheckTempoConfig).
type ConfigTools struct {
	Otelcol  string // the lab's collector build (OTELCOL_BIN), of the image's release
	Jaeger   string // Jaeger v2 (JAEGER_BIN), of the image's release
	Promtool string // promtool of the Prometheus release of the image (PROMTOOL_BIN)
}

// configChecks say, per workload, how its configuration is validated, given
// the container's arguments (with the mounted paths moved to where
// CheckConfigs wrote the files): by its program (command), or by the lab
// (inProcess), given also the pod's environment.
var configChecks = []struct {
	kind, name, container string
	command               func(t ConfigTools, args []string) ([]string, error)
	inProcess             func(args, env []string) []string
}{
	{"Deployment", "otelcol", "otelcol", func(t ConfigTools, args []string) ([]string, error) {
		return append([]string{t.Otelcol, "validate"}, args...), nil
	}, nil},
	// Jaeger v2 is a collector distribution, with the same subcommand.
	{"Deployment", "jaeger", "jaeger", func(t ConfigTools, args []string) ([]string, error) {
		return append([]string{t.Jaeger, "validate"}, args...), nil
	}, nil},
	{"Deployment", "prometheus", "prometheus", func(t ConfigTools, args []string) ([]string, error) {
		for _, a := range args {
			if file, ok := strings.CutPrefix(a, "--config.file="); ok {
				return []string{t.Promtool, "check", "config", file}, nil
			}
		}
		return nil, fmt.Errorf("no --config.file in its arguments %q", args)
	}, nil},
	{"Deployment", "tempo", "tempo", nil, CheckTempoConfig},
}

// CheckConfigs runs each telemetry program's own validation (the lab's, for
// Tempo) on the configuration its pod would get: the files of the ConfigMaps the container
// mounts, written under dir at their mount paths, its arguments, and only
// the environment the pod sets (its envFrom ConfigMaps and literal values),
// so that a variable the pod lacks is missing here too. It returns one
// problem per program that rejects its configuration.
func CheckConfigs(t ConfigTools, objs []Object, dir string) []string {
	var problems []string
	for _, c := range configChecks {
		id := strings.ToLower(c.kind) + "/" + c.name
		w := Find(objs, c.kind, c.name)
		if w == nil {
			problems = append(problems, "no "+id)
			continue
		}
		root := filepath.Join(dir, c.name)
		args, env, err := containerFiles(objs, w.PodSpec(), c.container, root)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s/%s: %v", id, c.container, err))
			continue
		}
		if c.inProcess != nil {
			if ps := c.inProcess(args, env); len(ps) > 0 {
				problems = append(problems, fmt.Sprintf("%s: the lab's Tempo %s configuration check rejects its configuration:\n    %s", id, tempoVersion,
					strings.ReplaceAll(strings.ReplaceAll(strings.Join(ps, "\n"), root, ""), "\n", "\n    ")))
			}
			continue
		}
		argv, err := c.command(t, args)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s/%s: %v", id, c.container, err))
			continue
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}, env...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			shown := strings.ReplaceAll(strings.Join(append([]string{filepath.Base(argv[0])}, argv[1:]...), " "), root, "")
			problems = append(problems, fmt.Sprintf("%s: %s rejects its configuration (%v):\n    %s", id, shown, err,
				strings.ReplaceAll(strings.TrimSpace(strings.ReplaceAll(string(out), root, "")), "\n", "\n    ")))
		}
	}
	return problems
}

// containerFiles writes the ConfigMaps a container mounts under root, at
// their mount paths, and returns the container's arguments with those paths
// moved under root, and its environment as KEY=VALUE.
func containerFiles(objs []Object, spec map[string]any, container, root string) ([]string, []string, error) {
	var ct map[string]any
	for _, c := range Containers(spec) {
		if str(c["name"]) == container {
			ct = c
		}
	}
	if ct == nil {
		return nil, nil, fmt.Errorf("no container %s", container)
	}
	configMap := func(name string) (map[string]any, error) {
		cm := Find(objs, "ConfigMap", name)
		if cm == nil {
			return nil, fmt.Errorf("no ConfigMap %s", name)
		}
		data, _ := cm["data"].(map[string]any)
		return data, nil
	}
	volumes := map[string]string{} // volume -> its ConfigMap
	for _, v := range list(spec["volumes"]) {
		m, _ := v.(map[string]any)
		if cm, ok := m["configMap"].(map[string]any); ok {
			volumes[str(m["name"])] = str(cm["name"])
		}
	}
	var mounts []string
	for _, v := range list(ct["volumeMounts"]) {
		m, _ := v.(map[string]any)
		cmName, ok := volumes[str(m["name"])]
		if !ok {
			continue // not configuration: data, tmp
		}
		data, err := configMap(cmName)
		if err != nil {
			return nil, nil, err
		}
		path := str(m["mountPath"])
		if err := os.MkdirAll(filepath.Join(root, path), 0o755); err != nil {
			return nil, nil, err
		}
		for file, content := range data {
			if err := os.WriteFile(filepath.Join(root, path, file), []byte(str(content)), 0o644); err != nil {
				return nil, nil, err
			}
		}
		mounts = append(mounts, path)
	}
	// The longest first, so that /conf/x moves as /conf/x, not as /conf.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	var args []string
	for _, a := range list(ct["args"]) {
		arg := str(a)
		for _, m := range mounts {
			if i := strings.Index(arg, m+"/"); i >= 0 {
				arg = arg[:i] + filepath.Join(root, m) + arg[i+len(m):]
				break
			}
		}
		args = append(args, arg)
	}
	env := map[string]string{}
	for _, e := range list(ct["envFrom"]) {
		m, _ := e.(map[string]any)
		ref, _ := m["configMapRef"].(map[string]any)
		if ref == nil {
			return nil, nil, fmt.Errorf("envFrom other than a ConfigMap is not supported here")
		}
		data, err := configMap(str(ref["name"]))
		if err != nil {
			return nil, nil, err
		}
		for k, v := range data {
			env[k] = str(v)
		}
	}
	for k, v := range Env(ct) {
		env[k] = v
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return args, out, nil
}
