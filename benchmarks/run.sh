#!/usr/bin/env bash
# Builds the library and the benchmark suite, then runs the suite on one in-process Kafka
# broker and writes benchmarks/target/benchmark-results.md. Arguments go to the suite:
#
#   benchmarks/run.sh                         every scenario at full size, 5 runs each
#   benchmarks/run.sh --scenarios=P1,P4 --runs=3
#   benchmarks/run.sh --p1-records=200k       smaller sizes (--help lists every option)
#   benchmarks/run.sh --smoke                 tiny sizes, one run: checks that it all works
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

(cd "$root" && mvn -q -B package -Dmaven.test.skip=true -pl benchmarks -am)

# shellcheck disable=SC2086
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" ${BENCHMARK_JAVA_OPTS:--Xms4g -Xmx4g} \
	-cp "$here/target/classes:$(cat "$here/target/runtime-classpath.txt")" \
	io.github.kafkaresilience.benchmarks.BenchmarkSuite \
	--output="$here/target/benchmark-results.md" --command="benchmarks/run.sh${*:+ $*}" "$@"
