package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

// storedCount reads the delivery count the scenario names.
func (r *Runner) storedCount(ctx context.Context, d *scenario.Delivery) (int64, error) {
	base, err := r.Runtime.Endpoint(d.Service)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+d.Path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("counting delivered events: %v; see .state/logs/%s.log", err, d.Service)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("counting delivered events: GET %s%s answered %s", base, d.Path, resp.Status)
	}
	var doc map[string]json.Number
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return 0, fmt.Errorf("counting delivered events: GET %s%s is not a JSON object of numbers: %v", base, d.Path, err)
	}
	n, ok := doc[d.Field]
	if !ok {
		return 0, fmt.Errorf("counting delivered events: GET %s%s has no field %q", base, d.Path, d.Field)
	}
	return strconv.ParseInt(n.String(), 10, 64)
}

// waitDelivered polls the count until every accepted event has arrived, or
// until it has stopped growing for deliveryQuiet (then the rest is lost).
func (r *Runner) waitDelivered(ctx context.Context, d *scenario.Delivery, before int64, c *result.DeliveryCount) error {
	const deliveryQuiet = 20 * time.Second
	last, since := int64(-1), time.Now()
	for {
		now, err := r.storedCount(ctx, d)
		if err != nil {
			return err
		}
		c.Stored = now - before
		if c.Stored >= c.Accepted && c.Stored == last {
			return nil
		}
		if c.Stored != last {
			last, since = c.Stored, time.Now()
		} else if time.Since(since) > deliveryQuiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
