#!/usr/bin/env bash
# expand-env.sh <TEMPLATE >FILE: each ${NAME} of the template becomes the
# variable's value, as GNU envsubst does, with only bash (macOS has no
# envsubst without gettext). A variable that is not set is refused: an empty
# port in a generated config fails later, and further from its cause.
set -euo pipefail
reference='\$\{([A-Za-z_][A-Za-z0-9_]*)\}'
while IFS= read -r line || [ -n "$line" ]; do
  out=
  while [[ $line =~ $reference ]]; do
    name=${BASH_REMATCH[1]}
    [ -n "${!name+set}" ] || { echo "expand-env: \${$name} is not set" >&2; exit 1; }
    out+=${line%%"${BASH_REMATCH[0]}"*}${!name}
    line=${line#*"${BASH_REMATCH[0]}"}
  done
  printf '%s\n' "$out$line"
done
