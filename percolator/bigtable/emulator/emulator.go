// Package emulator runs the official Cloud Bigtable emulator
// (cloud.google.com/go/bigtable/cmd/emulator, pinned by the module's go.mod
// as a tool) for tests: built from the module, started on 127.0.0.1 on a
// free port, stopped at the end.
package emulator

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// EnvHost is the variable the Bigtable client reads the emulator's address
// from.
const EnvHost = "BIGTABLE_EMULATOR_HOST"

// Emulator is a running emulator process.
type Emulator struct {
	// Addr is host:port.
	Addr string
	cmd  *exec.Cmd
	done chan error
	dir  string
}

// Start builds the emulator into a temporary directory (the go command's
// build cache makes this quick after the first time) and starts it on
// 127.0.0.1 on a free port. The go command runs in the current directory,
// which must be inside the module.
func Start() (*Emulator, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("emulator: the go command is needed to build the emulator: %w", err)
	}
	dir, err := os.MkdirTemp("", "bigtable-emulator")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "emulator")
	build := exec.Command(gobin, "build", "-o", bin, "cloud.google.com/go/bigtable/cmd/emulator")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("emulator: go build: %w\n%s", err, out)
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", "0")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = ChildAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("emulator: start: %w", err)
	}
	e := &Emulator{cmd: cmd, done: make(chan error, 1), dir: dir}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			const prefix = "Cloud Bigtable emulator running on "
			if a, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				select {
				case addr <- a:
				default:
				}
			}
		}
		e.done <- cmd.Wait()
	}()
	select {
	case e.Addr = <-addr:
		return e, nil
	case err := <-e.done:
		os.RemoveAll(dir)
		return nil, fmt.Errorf("emulator: exited before listening: %v", err)
	case <-time.After(30 * time.Second):
		e.Stop()
		return nil, errors.New("emulator: did not say where it listens within 30s")
	}
}

// Stop interrupts the emulator, kills it if it has not exited within 10s,
// and removes its binary.
func (e *Emulator) Stop() error {
	defer os.RemoveAll(e.dir)
	e.cmd.Process.Signal(os.Interrupt)
	select {
	case <-e.done:
		return nil
	case <-time.After(10 * time.Second):
		e.cmd.Process.Kill()
		<-e.done
		return errors.New("emulator: killed after not stopping within 10s")
	}
}

// Main runs the tests of m against an emulator: the one named by
// BIGTABLE_EMULATOR_HOST if it is set, else one it starts (setting the
// variable) and stops after the tests. Use it as the body of TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(emulator.Main(m)) }
func Main(m *testing.M) int {
	if os.Getenv(EnvHost) != "" {
		return m.Run()
	}
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv(EnvHost, e.Addr)
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Ensure makes BIGTABLE_EMULATOR_HOST name an emulator for one test: the
// one already named, or one it starts and stops at the test's end. It
// skips the test under -short.
func Ensure(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts the Bigtable emulator; -short skips it")
	}
	if os.Getenv(EnvHost) != "" {
		return
	}
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Setenv(EnvHost, e.Addr)
}
