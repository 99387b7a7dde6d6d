#!/usr/bin/env bash
# The defaults table of docs/models.md §9: every model at its defaults on the public sets, run
# as a user runs it (`run --json`, default preprocessing `auto`, default SVM scaling), ACC %
# (k-means on H, mean over the restarts) averaged over the seeds; 2-STGINMF with 10 % of the
# labels revealed, its accuracy on the samples not given. The triplet models (t-STE, RPNMF)
# and NMFCC get `--triplets generate` (the RPNMF protocol's triplets; NMFCC reads its links
# from them), as they need side information to be run at all.
#
# Usage: scripts/defaults-table.sh [OUT_DIR]     (default: defaults-table)
# Environment:
#   DATA      folder of the public sets            (default: ../shared/data)
#   BIN       the binary                           (default: target/release/nmf-playground,
#                                                    built with `cargo build --release`)
#   SEEDS     seeds                                (default: "1 2")
#   SMALL     sets that take SMALL_SEEDS instead   (default: "iris glass dermatology": their
#             runs take milliseconds and two seeds leave ±4 points of noise)
#   SMALL_SEEDS                                    (default: "1 2 3 4 5 6 7 8 9 10")
#   REPEATS   k-means restarts                     (default: 10)
#   SETS      datasets                             (default: all seven)
#   MODELS    models                               (default: all eleven)
#   SKIP      "model:set" pairs not to run         (default: "can:optdigits psmf:optdigits")
#   EXTRA     more arguments for every run         (e.g. "--svm raw")
# Writes OUT_DIR/runs.tsv (one line per run: set, model, seed, acc, class accuracy, seconds,
# preprocessing) as it goes (a rerun skips the lines already there), then OUT_DIR/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-defaults-table}
data=${DATA:-../shared/data}
bin=${BIN:-target/release/nmf-playground}
seeds=${SEEDS:-1 2}
small=${SMALL:-iris glass dermatology}
small_seeds=${SMALL_SEEDS:-1 2 3 4 5 6 7 8 9 10}
repeats=${REPEATS:-10}
sets=${SETS:-orl_32x32 digits_sklearn semeion iris glass dermatology optdigits}
models=${MODELS:-nmf gnmf rnmf nmfcc tste rpnmf fnmf psmf rmnmf can stginmf}
skip=${SKIP:-can:optdigits psmf:optdigits}
extra=${EXTRA:-}
[ -x "$bin" ] || { echo "defaults-table: $bin not found (cargo build --release)" >&2; exit 2; }
[ -d "$data" ] || { echo "defaults-table: $data not found (set DATA)" >&2; exit 2; }
mkdir -p "$out"
tsv=$out/runs.tsv
[ -f "$tsv" ] || printf 'set\tmodel\tseed\tacc\tclass_acc\tseconds\tpreprocess\n' >"$tsv"

path_of() {
  case $1 in
    orl_32x32) echo "$data/orl_32x32" ;;
    *) echo "$data/$1/$1.csv" ;;
  esac
}

for set in $sets; do
  for model in $models; do
    case " $skip " in *" $model:$set "*) continue ;; esac
    set_seeds=$seeds
    case " $small " in *" $set "*) set_seeds=$small_seeds ;; esac
    for seed in $set_seeds; do
      if awk -F'\t' -v s="$set" -v m="$model" -v e="$seed" \
        '$1==s && $2==m && $3==e {f=1} END {exit !f}' "$tsv"; then
        continue
      fi
      args=(run --data "$(path_of "$set")" --model "$model" --seed "$seed"
        --kmeans-repeats "$repeats" --json)
      case $model in
        tste | rpnmf | nmfcc) args+=(--triplets generate) ;;
        stginmf) args+=(--reveal 0.1) ;;
      esac
      # shellcheck disable=SC2206
      args+=($extra)
      json=$("$bin" "${args[@]}" 2>"$out/last.err") || {
        echo "defaults-table: $model on $set (seed $seed) failed: $(tail -n 3 "$out/last.err")" >&2
        printf '%s\t%s\t%s\tfailed\t\t\t\n' "$set" "$model" "$seed" >>"$tsv"
        continue
      }
      jq -r --arg s "$set" --arg m "$model" --arg e "$seed" \
        '[$s, $m, $e, (.metrics.acc // ""), (.metrics.class_acc // .metrics.accuracy // ""),
          .seconds, .dataset.preprocess] | @tsv' <<<"$json" >>"$tsv"
      tail -n 1 "$tsv" >&2
    done
  done
done

# The tables: per set and model, the mean over the seeds of ACC % (k-means on H; 2-STGINMF's
# cell is its accuracy on the samples not given), then of the 80/20 linear-SVM accuracy % on H.
table() {
  awk -F'\t' -v sets="$sets" -v models="$models" -v col="$1" '
    NR > 1 && $4 != "failed" {
      v = ($2 == "stginmf" || col == 5) ? $5 : $4
      if (v != "") { sum[$1 SUBSEP $2] += v; n[$1 SUBSEP $2]++ }
      if (!($1 in pre) || $2 == "nmf") pre[$1] = $7
      cellpre[$1 SUBSEP $2] = $7
    }
    NR > 1 && $4 == "failed" { bad[$1 SUBSEP $2] = 1 }
    END {
      ns = split(sets, S, " "); nm = split(models, M, " ")
      printf "| data (auto →) |"; for (j = 1; j <= nm; j++) printf " %s |", M[j]; printf "\n"
      printf "|---|"; for (j = 1; j <= nm; j++) printf "---|"; printf "\n"
      for (i = 1; i <= ns; i++) {
        printf "| %s (%s) |", S[i], pre[S[i]]
        for (j = 1; j <= nm; j++) {
          key = S[i] SUBSEP M[j]
          # A model whose `auto` resolved differently on this set (docs/models.md §1) says so.
          other = (cellpre[key] != pre[S[i]]) ? " (" cellpre[key] ")" : ""
          if (n[key] > 0) printf " %.1f%s |", 100 * sum[key] / n[key], other
          else if (bad[key]) printf " failed |"
          else printf " — |"
        }
        printf "\n"
      }
    }' "$tsv"
}
{
  echo "ACC % (k-means on H, mean over the restarts and the seeds: $seeds; for $small:"
  echo "$small_seeds. 2-STGINMF: accuracy on the samples not given with 10 % of the labels):"
  echo
  table 4
  echo
  echo "Classification accuracy % (80/20 stratified split, linear SVM on H; 2-STGINMF as above):"
  echo
  table 5
} >"$out/table.md"
cat "$out/table.md"
