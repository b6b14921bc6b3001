package storeflag

import (
	"flag"
	"strings"
	"testing"
)

func TestOracleFlag(t *testing.T) {
	const table = "bigtable://my-project/my-instance/webtable"
	parse := func(args ...string) *Flags {
		var f Flags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	if f := parse("-table", table, "-oracle", "127.0.0.1:7433,other:7433"); f.Validate() != nil || f.Check("") != nil {
		t.Errorf("-oracle with -table: %v, %v", f.Validate(), f.Check(""))
	}
	if err := parse("-oracle", "127.0.0.1:7433").Validate(); err == nil || !strings.Contains(err.Error(), "-oracle without -table") {
		t.Errorf("Validate of -oracle alone: %v", err)
	}
	bad := []struct {
		args []string
		data string
		want string
	}{
		{[]string{"-oracle", "127.0.0.1:7433"}, "", "no table"},
		{[]string{"-oracle", "127.0.0.1:7433"}, "dir", "-oracle goes with -table"},
		{[]string{"-table", table, "-oracle", "127.0.0.1"}, "", "oracle server address"},
		{[]string{"-table", table, "-oracle", "a:1,"}, "", "oracle server address"},
	}
	for _, c := range bad {
		err := parse(c.args...).Check(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q with -data %q: %v, want an error saying %q", c.args, c.data, err, c.want)
		}
	}
}
