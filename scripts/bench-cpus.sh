# Sourced by the media benchmark scripts: the server under test and the load generator run on
# disjoint CPUs (first half for the server, the rest for the generator), so the generator never
# preempts the server it measures. On a single CPU both share it.
#   "${ON_SERVER_CPUS[@]}" switchboard serve ... &      "${ON_CLIENT_CPUS[@]}" switchboard load ...
_cpus=$(nproc)
if (( _cpus >= 2 )); then
    SERVER_CPUS="0-$((_cpus / 2 - 1))"
    CLIENT_CPUS="$((_cpus / 2))-$((_cpus - 1))"
else
    SERVER_CPUS=0
    CLIENT_CPUS=0
fi
ON_SERVER_CPUS=(taskset -c "$SERVER_CPUS")
ON_CLIENT_CPUS=(taskset -c "$CLIENT_CPUS")
# One load-generator thread per generator CPU.
CLIENT_THREADS=$(( _cpus >= 2 ? _cpus - _cpus / 2 : 1 ))
