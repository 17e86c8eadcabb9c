#!/usr/bin/env bash
# dashboards/lint.sh LINTER: Grafana's dashboard-linter (make tools-test
# builds it) on every dashboard, strictly, with dashboards/.lint's
# exclusions; a dashboard's problems are printed without the linter's
# summary lines.
set -euo pipefail
linter=${1:?usage: dashboards/lint.sh DASHBOARD_LINTER_BIN}
cd "$(dirname "$0")/.."
for d in dashboards/*.json; do
	if ! problems=$("$linter" lint --strict -c dashboards/.lint "$d" 2>&1 >/dev/null); then
		grep -v '^Checks' <<<"$problems" || true
		exit 1
	fi
	echo "dashboard-linter $d: ok"
done
