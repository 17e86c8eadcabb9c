package cli

// What an offline round shows a person: the blind explorer, the questions
// level by level, the grade; and the reference scores of the whole set.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"tracelab/pkg/explorer"
	"tracelab/pkg/train"
)

// serveRound serves the round's traces in the blind explorer until stop.
func serveRound(addr string, r *train.Offline) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v (--addr picks another)", addr, err)
	}
	srv := &http.Server{Handler: explorer.New(explorer.Config{Round: &explorer.Round{ID: r.ID, Traces: r.Traces()}, Log: os.Stderr}),
		ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Printf("Training round %s (level %d; 'tracelab train --seed %d --level %d' replays it).\n", r.ID, r.Level, r.Seed, r.Level)
	fmt.Printf("Read its traces in the explorer: http://%s/#/search/round\n", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// askOffline asks the round's levels on out, reading the answers from in.
func askOffline(in *bufio.Reader, out io.Writer, r *train.Offline, traces string) (train.Reply, error) {
	var a train.Reply
	menu := func(title string, list []string) {
		fmt.Fprintln(out, "\n"+title)
		for i, c := range list {
			fmt.Fprintf(out, "  %d) %s\n", i+1, c)
		}
	}
	fmt.Fprintf(out, "The same traces as OTLP JSON: %s\n", traces)
	var err error
	for _, l := range r.Levels() {
		switch l {
		case train.LevelDetect:
			menu("Which pathology do the traces show?", r.Choices.Pathology)
			a.Pathology, err = ask(in, out, "pathology> ")
		case train.LevelLocalize:
			menu("In which service?", r.Choices.Service)
			if a.Service, err = ask(in, out, "service> "); err != nil {
				break
			}
			if len(r.Choices.Operation) <= 30 {
				menu("Which operation?", r.Choices.Operation)
			} else {
				fmt.Fprintln(out, "\nWhich operation? (as the explorer names it)")
			}
			if a.Operation, err = ask(in, out, "operation> "); err != nil {
				break
			}
			var spans string
			spans, err = ask(in, out, "span ids that show it (optional, separated by spaces)> ")
			a.Spans = strings.Fields(spans)
		case train.LevelExplain:
			menu("What makes it slow?", r.Choices.Mechanism)
			a.Mechanism, err = ask(in, out, "mechanism> ")
		case train.LevelFix:
			menu("Which setting of the service removes it?", r.Choices.Fix)
			a.Fix, err = ask(in, out, "fix> ")
		}
		if err != nil {
			return a, err
		}
	}
	return a, nil
}

// ask prompts and reads one line; an empty line is an empty answer.
func ask(in *bufio.Reader, out io.Writer, prompt string) (string, error) {
	fmt.Fprint(out, prompt)
	line, err := in.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", errors.New("train: no answer on standard input")
	}
	return strings.TrimSpace(line), nil
}

func printGrade(w io.Writer, g train.Marks, p train.Played, key AnswerKey) {
	fmt.Fprintf(w, "\nScore %.0f%% (random guessing %.0f%%, tracelab analyze %.0f%% on this round)\n", 100*g.Score, 100*p.Random, 100*p.Analyzer)
	for _, l := range g.Levels {
		fmt.Fprintf(w, "  %d %-9s %4.0f%%  %s\n", l.Level, l.Name, 100*l.Score, l.Why)
	}
	fmt.Fprintf(w, "The round was the recording %s (%s)", key.Case, key.Stack)
	if key.Scenario != "" {
		fmt.Fprintf(w, ": scenario %s, variant %s; its guide is scenarios/%s/README.md", key.Scenario, key.Variant, key.Scenario)
	}
	fmt.Fprintln(w, ".")
	if len(key.Services) > 0 {
		fmt.Fprintf(w, "Its services were renamed: %v\n", key.Services)
	}
}

// printReference prints random guessing's expected score and the
// analyzer's on every round of the set, per pathology.
func printReference(set *train.Set, level int) int {
	var rounds []train.Played
	for _, c := range set.Cases {
		r, err := set.Round(c, rand.New(rand.NewSource(1)), 1, level)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		a, err := r.AnalyzerReply()
		if err != nil {
			return fail(exitRuntime, "%v", err)
		}
		g := r.Score(a)
		rounds = append(rounds, train.Played{Case: c.Name, Pathology: c.Pathology, Marks: g, Random: r.Random(), Analyzer: g.Score})
	}
	fmt.Printf("Every round of the set at level %d; \"detected\" and \"score\" are the analyzer's:\n", level)
	train.Summarize(rounds).Print(os.Stdout)
	return exitOK
}
