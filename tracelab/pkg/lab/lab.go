// Package lab is the checkout: its root, its state folder, the ports every
// runtime binds (infra/local/ports.env), the tools `make tools` built
// (.state/tools.env) and the component descriptions (pkg/components). A
// command opens it once and hands it to the runtimes, the generator and the
// scenario loader, so each file is found and parsed in one place.
package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"tracelab/pkg/components"
)

// The checkout's files that more than one package reads, relative to its root.
const (
	PortsFile    = "infra/local/ports.env"
	VersionsFile = "infra/local/versions.env"
	StateDir     = ".state"
	ToolsFile    = StateDir + "/tools.env"
)

// Settings are startup settings per service: service -> VARIABLE -> value.
type Settings map[string]map[string]string

// ErrNoTools means .state/tools.env is missing: nothing can have been started.
var ErrNoTools = errors.New("the lab's tools are not installed; run 'make tools'")

// Checkout is the lab's checkout as read at Open.
type Checkout struct {
	Root  string
	State string            // Root/.state, ignored by git
	Ports map[string]string // infra/local/ports.env
	// portsText is ports.env as written: the generator keeps its
	// hand-written part byte for byte.
	portsText []byte

	toolsOnce sync.Once
	tools     map[string]string
	toolsErr  error

	componentsOnce sync.Once
	components     *components.Lab
	componentsErr  error

	infraOnce sync.Once
	always    []string
	infraErr  error
}

// Open reads the checkout at root. Only ports.env is required: the tools
// and the descriptions are read on first use, so a command that needs
// neither does not fail on them.
func Open(root string) (*Checkout, error) {
	text, err := os.ReadFile(filepath.Join(root, PortsFile))
	if err != nil {
		return nil, err
	}
	ports, err := ParseEnv(text, filepath.Base(PortsFile))
	if err != nil {
		return nil, err
	}
	return &Checkout{Root: root, State: filepath.Join(root, StateDir), Ports: ports, portsText: text}, nil
}

// Find returns the checkout's root: TRACELAB_ROOT, or the nearest parent of
// the working directory that holds infra/local/ports.env.
func Find() (string, error) {
	if r := os.Getenv("TRACELAB_ROOT"); r != "" {
		if _, err := os.Stat(filepath.Join(r, PortsFile)); err != nil {
			return "", fmt.Errorf("TRACELAB_ROOT=%s is not the lab's checkout: it has no %s", r, PortsFile)
		}
		return filepath.Abs(r)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, PortsFile)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the lab's checkout (no %s above the working directory); set TRACELAB_ROOT", PortsFile)
		}
		dir = parent
	}
}

// PortsText is ports.env as written, comments and order included.
func (c *Checkout) PortsText() []byte { return c.portsText }

// Path joins rel (slash-separated) to the root.
func (c *Checkout) Path(rel string) string { return filepath.Join(c.Root, filepath.FromSlash(rel)) }

// Tools are the paths of the tools `make tools` built, or ErrNoTools.
func (c *Checkout) Tools() (map[string]string, error) {
	c.toolsOnce.Do(func() {
		if c.tools, c.toolsErr = ReadEnvFile(c.Path(ToolsFile)); c.toolsErr != nil {
			c.toolsErr = ErrNoTools
		}
	})
	return c.tools, c.toolsErr
}

// Components are the validated service descriptions and infrastructure list.
func (c *Checkout) Components() (*components.Lab, error) {
	c.componentsOnce.Do(func() { c.components, c.componentsErr = components.Load(c.Root) })
	return c.components, c.componentsErr
}

// AlwaysInfra is the telemetry stack every scenario needs: the
// infrastructure infra/components.yaml marks always. It reads only the
// infrastructure list, as a runtime must start even when a service's
// description is being edited.
func (c *Checkout) AlwaysInfra() ([]string, error) {
	c.infraOnce.Do(func() { _, c.always, c.infraErr = components.InfraNames(c.Root) })
	// A copy: callers append the scenario's services to it.
	return append([]string(nil), c.always...), c.infraErr
}
