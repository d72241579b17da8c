#!/usr/bin/env bash
# rename-batch.sh: one name per concept (issue 27). Rewrites every use of
# the aliases that package sources re-exports from package record
# (sources.Batch, Form, LateLabel, Reject, RecordError, FormDense,
# FormSparse, FormText) to the record names, removes the alias
# declarations from sources/batch.go, and fixes the imports.
#
# Usage, from the repository root on a clean tree (it edits in place; check
# with git diff, then go build ./... && go vet ./... && go test ./...):
#
#	bash scripts/rename-batch.sh
#
# Outside package sources the rewrite is gofmt -r on selector expressions;
# inside it, a word-bounded rewrite of code lines (not comments) that
# leaves selectors (b.Batch), calls and method names (Batch()) and
# composite-literal keys (Form:) alone.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

declare -A to=(
	[Batch]=Batch [Form]=Form [LateLabel]=LateLabel [Reject]=Reject
	[RecordError]=Error [FormDense]=FormDense [FormSparse]=FormSparse [FormText]=FormText
)
rec='"github.com/nmfstream/nmfstream/record"'

# 1. Every Go file outside package sources (its external tests included;
# third_party is another module).
mapfile -t files < <(git ls-files '*.go' | grep -v '^third_party/' |
	xargs grep -L '^package sources$' |
	xargs grep -lE '\bsources\.(Batch|Form|LateLabel|Reject|RecordError|FormDense|FormSparse|FormText)\b' || true)
for f in "${files[@]}"; do
	# A file with its own identifier record (examples/service has a type
	# record) imports the package as nsrecord.
	pkg=record name=
	if grep -qE '^(type|var|func) record\b|^\s*record\s*:?=' "$f"; then
		pkg=nsrecord name='nsrecord '
	fi
	for a in "${!to[@]}"; do
		gofmt -r "sources.$a -> $pkg.${to[$a]}" -w "$f"
	done
	# The record import, after the sources import, if the file lacks it.
	if ! grep -q "$rec" "$f"; then
		perl -0pi -e 's{^(\s*)"github.com/nmfstream/nmfstream/sources"\n}{$1'"$name"'"github.com/nmfstream/nmfstream/record"\n$1"github.com/nmfstream/nmfstream/sources"\n}m' "$f"
	fi
	# The sources import, if nothing else of sources is used.
	# (no grep -q: under pipefail its early exit would fail the pipe)
	if ! grep -vE "^\s*//" "$f" | grep -E "\bsources\." >/dev/null; then
		perl -ni -e 'print unless /^\s*"github.com\/nmfstream\/nmfstream\/sources"\s*$/' "$f"
	fi
	gofmt -w "$f"
done

# 2. Package sources itself: drop the aliases, then spell the record names.
perl -0pi -e 's{// The batch types are defined in package record.*?\n\)\n\n// The feature forms, as in package record\.\nconst \(.*?\n\)\n\n}{}s' sources/batch.go
for f in $(git ls-files 'sources/*.go' | xargs grep -l '^package sources$'); do
	perl -pi -e '
		next if m{^\s*//};
		my $key = m{^\s*case\b} ? qr/\(/ : qr/[(:]/;  # a case label keeps its colon
		s{(?<![.\w"])RecordError\b(?!\s*$key)}{record.Error}g;
		s{(?<![.\w"])(Batch|Form|LateLabel|Reject|FormDense|FormSparse|FormText)\b(?!\s*$key)}{record.$1}g;
	' "$f"
	if grep -q 'record\.' "$f" && ! grep -q "$rec" "$f"; then
		perl -0pi -e 's{^package sources\n\nimport \(\n}{package sources\n\nimport (\n\t"github.com/nmfstream/nmfstream/record"\n}m; s{^package sources\n\nimport (".*?")\n}{package sources\n\nimport (\n\t$1\n\t"github.com/nmfstream/nmfstream/record"\n)\n}m' "$f"
	fi
	gofmt -w "$f"
done

echo "rename-batch: rewrote ${#files[@]} files outside sources; now run go build ./... && go vet ./... && go test ./..."
