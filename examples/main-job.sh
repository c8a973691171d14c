#!/usr/bin/env bash
# The main job: the doctor on this machine, then each example environment through the doctor and the example
# suite, so the header, the findings and real skip reasons can be seen on any machine, GPU or not.
set -u
cd "$(dirname "$0")/.."
bin=".venv/bin"
if [ ! -x "$bin/pytest-cudnn" ]; then
    found=$(command -v pytest-cudnn) || { echo "pytest-cudnn is not installed: run the README's set-up first" >&2; exit 2; }
    bin=$(dirname "$found")
fi
status=0
echo "=== pytest-cudnn doctor (this machine)"
"$bin/pytest-cudnn" doctor
for snapshot in examples/snapshots/*.json; do
    echo
    echo "=== $snapshot: doctor"
    "$bin/pytest-cudnn" doctor --env "$snapshot"
    echo "=== $snapshot: example suite"
    # Skips are the point here; a failure or an error is not.
    "$bin/pytest" examples/suite -p no:cacheprovider -rs --gpu-env="$snapshot" || status=1
done
exit $status
