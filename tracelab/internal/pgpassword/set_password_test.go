// Package pgpassword tests k8s/base/data/set-postgres-password.sh, the
// PostgreSQL StatefulSet's initContainer that makes the password on an
// existing volume follow the Secret, against a real PostgreSQL: the server
// binaries of the tool cache (make tools), on a data directory and a port
// of its own.
package pgpassword

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tracelab/internal/labtest"
	"tracelab/internal/repotest"
)

// A password with what SQL and the shell quote: the script must pass it
// through both unchanged.
const (
	oldPassword = "old-password"
	newPassword = `new'pass"word $x \n`
)

func TestRotatedPasswordReplacesTheOneOnTheVolume(t *testing.T) {
	pg := newServer(t)
	pg.initdb(oldPassword)
	pg.start()
	pg.mustLogIn(oldPassword)
	pg.mustNotLogIn(newPassword)
	// As when the pod is killed for its rollout: the script then starts on
	// a cluster that needs crash recovery.
	pg.stop("immediate")

	if out, err := pg.setPassword("lab", newPassword); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pg.start()
	pg.mustLogIn(newPassword)
	pg.mustNotLogIn(oldPassword)
	pg.stop("fast")

	// Unchanged Secret, next restart: the same password again.
	if out, err := pg.setPassword("lab", newPassword); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pg.start()
	pg.mustLogIn(newPassword)
}

// On an empty volume the image's initdb sets the password: nothing to do.
func TestNoClusterYetIsLeftToInitdb(t *testing.T) {
	pg := newServer(t)
	out, err := pg.setPassword("lab", newPassword)
	if err != nil || !strings.Contains(out, "the image's initdb will set the password") {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(pg.data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the script touched the empty volume: %v", err)
	}
}

// What cannot work fails the pod's start with one line, and never prints
// the password.
func TestSetPasswordFailuresSayWhy(t *testing.T) {
	pg := newServer(t)
	pg.initdb(oldPassword)
	cases := []struct{ role, password, want string }{
		{"nobody-here", newPassword, `set-postgres-password: ERROR:  role "nobody-here" does not exist`},
		{"lab", "two\nlines", "set-postgres-password: POSTGRES_PASSWORD holds a line break"},
	}
	for _, tc := range cases {
		out, err := pg.setPassword(tc.role, tc.password)
		if err == nil || !strings.HasPrefix(strings.TrimSpace(out), tc.want) || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("role %s: got %v, output:\n%s\nwant one line starting %q", tc.role, err, out, tc.want)
		}
		if strings.Contains(out, tc.password) {
			t.Errorf("role %s: the output holds the password:\n%s", tc.role, out)
		}
	}
	pg.start()
	pg.mustLogIn(oldPassword)
}

// server is a PostgreSQL data directory and the commands around it. As
// root (PostgreSQL refuses to run as root) everything runs as nobody, from
// a copy of the binaries it can read, as infra/local/run-postgres.sh does.
type server struct {
	t              *testing.T
	bin, dir, data string
	port           string
	as             []string // the command prefix that drops root
	script         string
	running        bool
}

func newServer(t *testing.T) *server {
	t.Helper()
	bin := os.Getenv("PG_BIN_DIR")
	if bin == "" {
		bin = labtest.Tools(t)["PG_BIN_DIR"]
	}
	if _, err := os.Stat(filepath.Join(bin, "postgres")); bin == "" || err != nil {
		t.Skip("no PostgreSQL binaries (PG_BIN_DIR, or .state/tools.env from 'make tools'); set-postgres-password.sh is not tested")
	}
	s := &server{t: t, bin: bin, dir: t.TempDir(), port: repotest.FreePort(t)}
	// A copy of the script where nobody (the user, as root) can read it.
	script, err := os.ReadFile(filepath.Join(repotest.Root(t), "k8s", "base", "data", "set-postgres-password.sh"))
	if err != nil {
		t.Fatal(err)
	}
	s.script = filepath.Join(s.dir, "set-postgres-password.sh")
	os.WriteFile(s.script, script, 0o644)
	s.data = filepath.Join(s.dir, "data", "pgdata") // a subfolder, as PGDATA in the pod
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("running as root without setpriv: PostgreSQL cannot be started")
		}
		s.as = []string{"setpriv", "--reuid=nobody", "--regid=nogroup", "--init-groups"}
		for d := s.dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		dist := filepath.Join(s.dir, "dist")
		s.must("cp", "-a", filepath.Dir(bin), dist)
		s.must("chmod", "-R", "a+rX", dist)
		s.bin = filepath.Join(dist, "bin")
		os.MkdirAll(filepath.Join(s.dir, "data"), 0o700)
		s.must("chown", "-R", "nobody:", filepath.Join(s.dir, "data"))
	} else {
		os.MkdirAll(filepath.Join(s.dir, "data"), 0o700)
	}
	t.Cleanup(func() {
		if s.running {
			s.stop("immediate")
		}
	})
	return s
}

func (s *server) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, s.as...), name), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	return cmd
}

func (s *server) must(name string, args ...string) {
	s.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

func (s *server) run(cmd *exec.Cmd) {
	s.t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v: %s", strings.Join(cmd.Args, " "), err, out)
	}
}

// initdb creates the cluster as the postgres image does on an empty
// volume: the role lab with the given password. Every connection must give
// a password (the image's pg_hba.conf asks for one from the network).
func (s *server) initdb(password string) {
	s.t.Helper()
	pwfile := filepath.Join(s.dir, "pwfile")
	os.WriteFile(pwfile, []byte(password+"\n"), 0o644)
	defer os.Remove(pwfile)
	s.run(s.command(filepath.Join(s.bin, "initdb"), "-D", s.data, "-U", "lab", "--pwfile="+pwfile,
		"--auth=password", "-E", "UTF8", "--locale=C"))
}

// start starts the server on 127.0.0.1 and returns once it accepts
// connections (pg_ctl -w).
func (s *server) start() {
	s.t.Helper()
	sockets := filepath.Join(s.dir, "data")
	s.run(s.command(filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-w", "-l", filepath.Join(s.dir, "data", "log"),
		"-o", "-c listen_addresses=127.0.0.1 -p "+s.port+" -c unix_socket_directories="+sockets, "start"))
	s.running = true
}

func (s *server) stop(mode string) {
	s.t.Helper()
	s.run(s.command(filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-w", "-m", mode, "stop"))
	s.running = false
}

// setPassword runs the script as the initContainer does: the postgres
// image's environment, with its binaries on the PATH.
func (s *server) setPassword(role, password string) (string, error) {
	cmd := s.command("sh", s.script)
	cmd.Env = []string{"PATH=" + s.bin + ":/usr/bin:/bin", "PGDATA=" + s.data, "POSTGRES_USER=" + role, "POSTGRES_PASSWORD=" + password}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *server) mustLogIn(password string) {
	s.t.Helper()
	if err := logIn(s.port, "lab", password); err != nil {
		s.t.Fatalf("lab with password %q: %v", password, err)
	}
}

func (s *server) mustNotLogIn(password string) {
	s.t.Helper()
	err := logIn(s.port, "lab", password)
	if err == nil || !strings.Contains(err.Error(), `password authentication failed for user "lab"`) {
		s.t.Fatalf("lab with password %q: got %v, want a failed password authentication", password, err)
	}
}

// logIn opens a session as user with password over PostgreSQL's wire
// protocol (v3, cleartext password: the test's pg_hba.conf asks for that)
// and returns the server's error if it refuses. The server checks the
// password against the hash it stores, whatever the method on the wire.
func logIn(port, user, password string) error {
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	send := func(kind byte, body []byte) {
		var msg []byte
		if kind != 0 {
			msg = append(msg, kind)
		}
		msg = binary.BigEndian.AppendUint32(msg, uint32(4+len(body)))
		conn.Write(append(msg, body...))
	}
	startup := binary.BigEndian.AppendUint32(nil, 3<<16) // protocol 3.0
	startup = append(startup, "user\x00"+user+"\x00database\x00postgres\x00\x00"...)
	send(0, startup)
	r := bufio.NewReader(conn)
	for {
		kind, err := r.ReadByte()
		if err != nil {
			return err
		}
		var n uint32
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return err
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		switch {
		case kind == 'E':
			for _, field := range strings.Split(string(body), "\x00") {
				if strings.HasPrefix(field, "M") {
					return errors.New(field[1:])
				}
			}
			return errors.New("the server refused the session")
		case kind == 'R' && binary.BigEndian.Uint32(body) == 3: // cleartext password, please
			send('p', append([]byte(password), 0))
		case kind == 'R' && binary.BigEndian.Uint32(body) == 0: // authenticated
			send('X', nil)
			return nil
		case kind == 'R':
			return fmt.Errorf("unexpected authentication request %d", binary.BigEndian.Uint32(body))
		}
	}
}
