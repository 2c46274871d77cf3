#!/usr/bin/env bash
# The CUDA target's check on a GPU machine, in one go (issue 72; docs/notes/cuda.md).
#
#   bash tools/device_check.sh [FOLDER]          # FOLDER defaults to $OUT, else ./device-check
#   AUTOJIT_DEVICE_CHECK_SIMULATE=1 bash tools/device_check.sh /tmp/dc   # the host rehearsal
#
# Run from the repository root on a fresh machine (H100/H200; no network: nothing is fetched).
# Phases, each under `timeout` so that a hang in one cannot eat the others' time, all inside
# one budget (AUTOJIT_DEVICE_CHECK_BUDGET seconds, 540 by default: 9 minutes):
#   setup        wheels carried in .whl/ (AUTOJIT_WHEELS), if any, installed into a folder on
#                PYTHONPATH with pip --no-index (the image's NumPy 2.5 is too new for
#                numba-cuda 0.30: carry a numpy<2.5 wheel, see tools/device_check.sh's note
#                below); a failing pip is reported and the check goes on with what is there;
#   env          nvidia-smi, versions, numba.cuda / CuPy / torch availability, one compiled
#                CUDA step (env.json);
#   elementwise  bench/cuda_elementwise.py;    mlp  bench/cuda_mlp_step.py;
#   steps        bench/cuda_steps.py (cuda_steps.json): elementwise, MLP, GPT, ResNet-8
#                against torch eager and torch.compile;
#   profile      one compiled MLP step, CUDA events around each plan step (profile_mlp.json),
#                and under nsys where nsys is on the PATH;
#   tests        tests/test_cuda*.py (the op table's CUDA rows are tests/test_cuda_op_table.py)
#                with a per-test timeout and junit XML (junit_cuda.xml), in the time left.
# Typical times on an H100/H200 (estimated: not yet run there): env 10 s, elementwise and mlp
# 15-30 s each, steps 120-240 s (torch.compile of the GPT and ResNet steps last), profile
# 15 s, tests the rest (the CUDA tests took about 300 s on 16 workers in the last run). Where
# the tests need the whole budget, run it twice: AUTOJIT_DEVICE_CHECK_PHASES="env tests", then
# AUTOJIT_DEVICE_CHECK_PHASES="env elementwise mlp steps profile nsys" (each about 9 minutes
# at most; the second call's folder must differ or be fetched first: $OUT is emptied).
# The folder gets summary.txt, summary.json, env.json, cuda_steps.json, profile_mlp.json,
# junit_cuda.xml and logs.tar.gz (every phase's log): at most 8 files, as the device tool
# returns. The summary is printed last.
#
# Settings (environment): AUTOJIT_PYTHON (python3; .venv/bin/python when simulating),
# AUTOJIT_DEVICE_CHECK_BUDGET, AUTOJIT_DEVICE_CHECK_TESTS (pytest's arguments instead of
# tests/test_cuda*.py), AUTOJIT_DEVICE_CHECK_WORKERS (pytest -n, nproc by default),
# AUTOJIT_DEVICE_CHECK_TEST_TIMEOUT (seconds per test, 120), AUTOJIT_DEVICE_CHECK_PHASES (the
# phases to run, "env elementwise mlp steps profile nsys tests" by default),
# AUTOJIT_DEVICE_CHECK_STEPS_ARGS (extra arguments of bench/cuda_steps.py),
# AUTOJIT_DEVICE_CHECK_STEPS_LIMIT (seconds for the steps phase, 240).
# AUTOJIT_DEVICE_CHECK_SIMULATE=1 runs everything under Numba's CUDA simulator with tiny sizes
# (--quick) and a few CUDA tests: a rehearsal on a machine without a GPU (tests/test_device_check.py).
#
# NumPy wheel for the device (numba-cuda 0.30.4 needs NumPy < 2.5; the image has 2.5.2): here,
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
#     -d .whl 'numpy==2.4.*'
# with .whl/ ignored by git (.git/info/exclude), and `carry: [".whl"]` in the device call.

set -u
DIR=${1:-${OUT:-device-check}}
mkdir -p "$DIR/logs"
DIR=$(cd "$DIR" && pwd)
LOGS=$DIR/logs
SIMULATE=${AUTOJIT_DEVICE_CHECK_SIMULATE:-0}
BUDGET=${AUTOJIT_DEVICE_CHECK_BUDGET:-540}
PHASES=${AUTOJIT_DEVICE_CHECK_PHASES:-env elementwise mlp steps profile nsys tests}
WORKERS=${AUTOJIT_DEVICE_CHECK_WORKERS:-$(nproc)}
TEST_TIMEOUT=${AUTOJIT_DEVICE_CHECK_TEST_TIMEOUT:-120}
WHEELS=${AUTOJIT_WHEELS:-.whl}
START=$(date +%s)
SUMMARY=$DIR/summary.txt
: >"$SUMMARY"
echo "[" >"$DIR/summary.phases"

if [ "$SIMULATE" = 1 ]; then
    PY=${AUTOJIT_PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
    export NUMBA_ENABLE_CUDASIM=1
    QUICK=--quick
    TESTS=${AUTOJIT_DEVICE_CHECK_TESTS:-tests/test_cuda_vector.py -k scalar}
else
    PY=${AUTOJIT_PYTHON:-python3}
    export NUMBA_ENABLE_CUDASIM=0  # tests/cuda_simulator.py would turn the simulator on
    QUICK=
    TESTS=${AUTOJIT_DEVICE_CHECK_TESTS:-$(ls tests/test_cuda*.py | tr '\n' ' ')}
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PY SIMULATE DIR
export PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/autojit-numba-cache}

note() { echo "$*" | tee -a "$SUMMARY"; }

elapsed() { echo $(( $(date +%s) - START )); }

# phase NAME LIMIT COMMAND...: run COMMAND under `timeout`, for at most LIMIT seconds and at most
# what the budget has left (less 10 s for packing), its output in logs/NAME.log.
phase() {
    local name=$1 limit=$2
    shift 2
    case " $PHASES " in *" $name "*) ;; *) return 0 ;; esac
    local left=$(( BUDGET - $(elapsed) - 10 ))
    [ "$limit" -gt "$left" ] && limit=$left
    if [ "$limit" -lt 5 ]; then
        note "$(printf '%-12s skipped: the budget of %s s is spent' "$name" "$BUDGET")"
        printf '{"phase": "%s", "rc": null, "seconds": 0, "limit": 0},\n' "$name" \
            >>"$DIR/summary.phases"
        return 0
    fi
    local begin rc seconds status
    begin=$(date +%s)
    echo "== $name (limit ${limit} s): $*" >"$LOGS/$name.log"
    # through bash, so that COMMAND may be one of the functions below (exported); SIGINT first,
    # so that pytest writes its junit XML and a benchmark its JSON before they stop
    timeout -s INT -k 20 "$limit" bash -c '"$@"' "$name" "$@" >>"$LOGS/$name.log" 2>&1
    rc=$?
    seconds=$(( $(date +%s) - begin ))
    case $rc in
        0) status=ok ;;
        124|137) status="TIMED OUT after ${limit} s" ;;
        *) status="failed (exit status $rc)" ;;
    esac
    note "$(printf '%-12s %-32s %4d s' "$name" "$status" "$seconds")"
    printf '{"phase": "%s", "rc": %d, "seconds": %d, "limit": %d},\n' "$name" "$rc" \
        "$seconds" "$limit" >>"$DIR/summary.phases"
    return 0
}

# run_python SCRIPT ARGS...: a script of the repository; under the simulator through
# tests/cuda_simulator.py, which fixes the simulator's shared arrays and barriers first.
run_python() {
    if [ "$SIMULATE" = 1 ]; then
        "$PY" -c "import runpy, sys; sys.path.insert(0, 'tests'); import cuda_simulator; \
sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')" "$@"
    else
        "$PY" "$@"
    fi
}
export -f run_python

note "device check: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget ${BUDGET} s, simulate=$SIMULATE, $(git rev-parse --short HEAD 2>/dev/null || echo 'no git') $(git status --porcelain 2>/dev/null | wc -l | tr -d ' ') changed files"

# ---- setup: carried wheels --------------------------------------------------------------------
if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
    SITE=/tmp/autojit-site
    if timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
            --upgrade --target "$SITE" "$WHEELS"/*.whl >"$LOGS/setup.log" 2>&1; then
        export PYTHONPATH="$SITE:$PYTHONPATH"
        note "setup        installed $(ls "$WHEELS"/*.whl | wc -l) wheel(s) from $WHEELS into $SITE"
    else
        note "setup        pip could not install the wheels in $WHEELS (logs/setup.log): going on with the installed packages"
    fi
else
    note "setup        no wheels in $WHEELS: using the installed packages"
fi

# ---- env --------------------------------------------------------------------------------------
env_check() {
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi
        nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
            --format=csv
    else
        echo "nvidia-smi: not found"
    fi
    uname -a
    "$PY" "$PWD/tools/device_check_env.py" "$DIR/env.json"
}
export -f env_check
phase env 60 env_check

# ---- benchmarks and the profile ---------------------------------------------------------------
phase elementwise 45 run_python bench/cuda_elementwise.py $QUICK
phase mlp 45 run_python bench/cuda_mlp_step.py $QUICK
if [ "$SIMULATE" = 1 ]; then
    STEPS_ARGS=${AUTOJIT_DEVICE_CHECK_STEPS_ARGS:---workloads elementwise mlp}
else
    STEPS_ARGS=${AUTOJIT_DEVICE_CHECK_STEPS_ARGS:---runner-timeout 90}
fi
# shellcheck disable=SC2086 - word splitting of the argument lists is meant
phase steps "${AUTOJIT_DEVICE_CHECK_STEPS_LIMIT:-240}" run_python bench/cuda_steps.py $QUICK $STEPS_ARGS --json "$DIR/cuda_steps.json"
phase profile 40 run_python bench/cuda_steps.py $QUICK --profile mlp --json "$DIR/profile_mlp.json"
if command -v nsys >/dev/null && [ "$SIMULATE" != 1 ]; then
    phase nsys 60 nsys profile --force-overwrite true -o "$LOGS/nsys_mlp" --stats=true \
        "$PY" bench/cuda_steps.py --profile mlp
fi

# ---- tests ------------------------------------------------------------------------------------
# pytest-xdist and pytest-timeout where installed; without them, one process and no per-test limit.
PYTEST_OPTIONS=""
if "$PY" -c "import xdist" 2>/dev/null; then PYTEST_OPTIONS="-n $WORKERS"; else
    note "tests        pytest-xdist is missing: the tests run in one process"; fi
if "$PY" -c "import pytest_timeout" 2>/dev/null; then
    PYTEST_OPTIONS="$PYTEST_OPTIONS --timeout $TEST_TIMEOUT"; else
    note "tests        pytest-timeout is missing: no per-test time limit"; fi
# shellcheck disable=SC2086
phase tests 330 "$PY" -m pytest $TESTS -o addopts= -q -rfE -p no:cacheprovider \
    $PYTEST_OPTIONS --junitxml "$DIR/junit_cuda.xml"

# ---- summary ----------------------------------------------------------------------------------
"$PY" "$PWD/tools/device_check_env.py" --summarize "$DIR" >>"$SUMMARY" 2>&1
sed -i '$ s/,$//' "$DIR/summary.phases"
echo "]" >>"$DIR/summary.phases"
note "total        $(elapsed) s of ${BUDGET} s"
"$PY" - "$DIR" <<'EOF' 2>/dev/null
import json, sys
folder = sys.argv[1]
with open(f"{folder}/summary.phases") as handle:
    phases = json.load(handle)
with open(f"{folder}/summary.txt") as handle:
    text = handle.read()
with open(f"{folder}/summary.json", "w") as handle:
    json.dump({"phases": phases, "summary": text.splitlines()}, handle, indent=1)
EOF
rm -f "$DIR/summary.phases"
tar -czf "$DIR/logs.tar.gz" -C "$DIR" logs && rm -rf "$LOGS"
echo
echo "==== $DIR/summary.txt"
cat "$SUMMARY"
exit 0
