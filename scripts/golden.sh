#!/usr/bin/env bash
# Fixed cases for refactors that must not change a bit: every model's `run --out` arrays on
# three public sets (and the bundled images), a small sweep and a k scan.
#   scripts/golden.sh DIR            write the cases into DIR (built binary: target/release)
#   scripts/golden.sh --cmp A B      compare two such folders byte for byte (run.json and
#                                    sweep times aside: they hold wall-clock seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--cmp" ]]; then
    a=$2 b=$3 bad=0 n=0
    while IFS= read -r f; do
        n=$((n + 1))
        if ! cmp -s "$a/$f" "$b/$f"; then echo "DIFFERS: $f"; bad=$((bad + 1)); fi
    done < <(cd "$a" && find . -type f \( -name '*.npy' -o -name '*.csv' \) ! -path '*sweep*' | sort)
    # A sweep's tables: rows in finishing order, and seconds per run; compare them sorted, without those.
    while IFS= read -r f; do
        n=$((n + 1))
        if ! diff -q <(python3 scripts/golden_strip.py "$a/$f") <(python3 scripts/golden_strip.py "$b/$f") >/dev/null; then
            echo "DIFFERS: $f"; bad=$((bad + 1)); fi
    done < <(cd "$a" && find . -type f -path '*sweep*' -name '*.csv' | sort)
    echo "$n files compared, $bad differ"
    [[ $bad == 0 ]]
    exit
fi
out=${1:?usage: scripts/golden.sh DIR | --cmp A B}
bin=${BIN:-target/release/nmf-playground}
data=../shared/data
mkdir -p "$out"
models="nmf gnmf rnmf nmfcc tste rmnmf fnmf psmf can rpnmf stginmf"
for set in iris glass digits_sklearn; do
    for m in $models; do
        extra=()
        case $m in
            tste | rpnmf | nmfcc) extra=(--triplets generate) ;;
            stginmf) extra=(--reveal 0.1) ;;
            gnmf) extra=(--reveal 0.2) ;;
        esac
        iters=60
        "$bin" run --data "$data/$set/$set.csv" --model "$m" --seed 3 --max-iter $iters \
            --kmeans-repeats 3 --threads 2 "${extra[@]}" --out "$out/$set-$m" >/dev/null 2>&1 \
            || echo "run failed: $set $m" >&2
    done
done
"$bin" run --data "$data/mat/ORL_32x32.mat" --model psmf --seed 2 --max-iter 20 --kmeans-repeats 2 --out "$out/orl-psmf" >/dev/null 2>&1
"$bin" run --data sample:glyphs --model rpnmf --triplets generate --seed 1 --max-iter 40 \
    --kmeans-repeats 2 --out "$out/glyphs-rpnmf" >/dev/null 2>&1
"$bin" sweep --data "$data/iris/iris.csv" --models nmf,gnmf --grid lambda=1,10 --repeats 2 \
    --max-iter 40 --kmeans-repeats 2 --out "$out/sweep-iris" >/dev/null 2>&1 || echo "sweep failed" >&2
echo "wrote $out"
