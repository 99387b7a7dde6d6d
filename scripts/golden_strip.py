"""Print a sweep's runs.csv or clusterings.csv for scripts/golden.sh --cmp: wall-clock columns
dropped and rows sorted (a parallel sweep appends rows in the order runs finish)."""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1], newline="")))
keep = [i for i, name in enumerate(rows[0]) if "second" not in name and "time" not in name]
print(",".join(rows[0][i] for i in keep))
for line in sorted(",".join(row[i] for i in keep if i < len(row)) for row in rows[1:]):
    print(line)
