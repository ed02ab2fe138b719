#!/usr/bin/env bash
# Builds the library and the benchmark suite, then runs the suite on one in-process Kafka
# broker and writes benchmarks/target/benchmark-results.md. Arguments go to the suite:
#
#   benchmarks/run.sh                         every scenario at full size, 5 runs each
#   benchmarks/run.sh --scenarios=P1,P4 --runs=3
#   benchmarks/run.sh --p1-records=200k       smaller sizes (--help lists every option)
#   benchmarks/run.sh --smoke                 tiny sizes, one run: checks that it all works
#   benchmarks/run.sh --runs=1 --update-docs  then puts the report's figures into
#                                             docs/BENCHMARKS.md (benchmarks/update-docs.sh)
#
# --update-docs is run.sh's own option, not the suite's. It refuses --smoke: smoke figures
# measure nothing.
#
# BENCHMARK_JAVA_OPTS replaces the JVM options (default: -Xms4g -Xmx4g). The heap is fixed at
# its size: P1 collects it before each pass, and a heap allowed to shrink after that collection
# makes the next pass pay for growing it again in young collections.
#
# JAVA_HOME, when set, chooses the JDK that builds and runs the suite (otherwise java from
# PATH). P2W and P2A run the library on virtual threads only on Java 21 or newer: set JAVA_HOME to a
# Java 21+ JDK to measure those contenders; on Java 17 they are reported as not run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
report="$here/target/benchmark-results.md"

update_docs=false
args=()
for arg in "$@"; do
	case "$arg" in
	--update-docs) update_docs=true ;;
	*) args+=("$arg") ;;
	esac
done
if $update_docs; then
	for arg in "${args[@]}"; do
		case "$arg" in
		--smoke | --smoke=*)
			echo "run.sh: --update-docs refuses --smoke: smoke figures measure nothing" >&2
			exit 2
			;;
		--help | -h)
			echo "run.sh: --update-docs with --help runs nothing" >&2
			exit 2
			;;
		esac
	done
	# a report left by an earlier run must not reach the docs if this one writes none
	rm -f "$report"
fi

(cd "$root" && mvn -q -B package -Dmaven.test.skip=true -pl benchmarks -am)

command="benchmarks/run.sh${*:+ $*}"
# shellcheck disable=SC2086
suite=("${JAVA_HOME:+$JAVA_HOME/bin/}java" ${BENCHMARK_JAVA_OPTS:--Xms4g -Xmx4g}
	-cp "$here/target/classes:$(cat "$here/target/runtime-classpath.txt")"
	io.github.kafkaresilience.benchmarks.BenchmarkSuite
	--output="$report" --command="$command" ${args[@]+"${args[@]}"})

if ! $update_docs; then
	exec "${suite[@]}"
fi

# status 1: a contender did not handle every record; the report says which, so it still goes in
status=0
"${suite[@]}" || status=$?
if [ "$status" -gt 1 ] || [ ! -f "$report" ]; then
	echo "run.sh: the suite wrote no report (status $status); docs/BENCHMARKS.md is unchanged" >&2
	exit "$status"
fi
"$here/update-docs.sh" "$report" "$root/docs/BENCHMARKS.md"
exit "$status"
