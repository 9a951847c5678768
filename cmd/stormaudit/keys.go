package main

import (
	"context"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"os"
	"path/filepath"
	"strings"

	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/urfave/cli/v3"
	"golang.org/x/mod/sumdb/note"
)

func keygenCommand() *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "create an Ed25519 key pair for signing checkpoints",
		Description: `Writes DIR/NAME.key (the signer key, mode 0600: keep it secret) and
DIR/NAME.pub (the verifier key: give it to reviewers). The files hold the
keys in the text form of golang.org/x/mod/sumdb/note.`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "the key's name, shown on every signature", Required: true},
			&cli.StringFlag{Name: "out", Usage: "directory to write the key files to", Value: "."},
		},
		Action: runKeygen,
	}
}

func runKeygen(ctx context.Context, cmd *cli.Command) error {
	name, dir := cmd.String("name"), cmd.String("out")
	skey, vkey, err := hashchain.GenerateKey(name)
	if err != nil {
		return usageErr("keygen: --name %q: %v", name, err)
	}
	// A key name may hold "/" (by convention it is often the log's name);
	// the file name may not.
	base := strings.ReplaceAll(name, "/", "_")
	keyPath, pubPath := filepath.Join(dir, base+".key"), filepath.Join(dir, base+".pub")
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Stat(p); err == nil {
			return usageErr("keygen: %s exists; expected a new file (remove it first to replace the key)", p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed("keygen", err)
	}
	if err := os.WriteFile(keyPath, []byte(skey+"\n"), 0o600); err != nil {
		return failed("keygen", err)
	}
	if err := os.WriteFile(pubPath, []byte(vkey+"\n"), 0o644); err != nil {
		return failed("keygen", err)
	}
	fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: wrote %s (secret, mode 0600) and %s\n", keyPath, pubPath)
	return nil
}

// loadSigner reads a signer key written by keygen. A key file that others
// can read is refused: whoever reads it can sign checkpoints.
func loadSigner(path string) (note.Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: the private key is readable by other users (mode %04o); expected mode 0600 (chmod 600 %s)", path, st.Mode().Perm(), path)
	}
	b, err := sidefile.Read(path, sidefile.MaxKey)
	if err != nil {
		return nil, err
	}
	s, err := note.NewSigner(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: expected a signer key written by stormaudit keygen: %v", path, err)
	}
	return s, nil
}

// loadVerifiers reads verifier keys written by keygen.
func loadVerifiers(paths []string) (note.Verifiers, []string, error) {
	var vs []note.Verifier
	var names []string
	for _, p := range paths {
		b, err := sidefile.Read(p, sidefile.MaxKey)
		if err != nil {
			return nil, nil, err
		}
		v, err := note.NewVerifier(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: expected a verifier key written by stormaudit keygen: %v", p, err)
		}
		vs = append(vs, v)
		names = append(names, v.Name())
	}
	return note.VerifierList(vs...), names, nil
}
