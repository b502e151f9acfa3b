// Counts, in the binary trace (mix.tr) HPCC ns-3 writes with ENABLE_TRACE 1 for the nodes of
// trace.txt (here node 0, the receiver), the data packets received, those with CE, and the ACKs
// the receiver sent with the CNP flag (its DCQCN notification), per sender and in total.
// Not built by feroce's CMake: it needs HPCC's headers (README.md). Built with
//   g++ -O2 -std=c++14 -I HPCC/simulation/build ns3_ecn_count.cc -o ns3_ecn_count
// and run as `ns3_ecn_count mix.tr`.
#include <cassert>
#include <cstdio>
#include <map>

#include "ns3/sim-setting.h"
#include "ns3/trace-format.h"

using namespace ns3;

int main(int argc, char **argv)
{
    FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
    if (!f) {
        fprintf(stderr, "usage: ns3_ecn_count mix.tr\n");
        return 1;
    }
    SimSetting s;
    s.Deserialize(f);
    TraceFormat t;
    std::map<uint32_t, unsigned long> rx, ce, cnp;
    while (t.Deserialize(f) > 0) {
        if (t.node != 0) continue;
        if (t.event == Recv && t.l3Prot == 0x11) { // a data packet
            rx[t.sip]++;
            if (t.ecn == 3) ce[t.sip]++;
        } else if (t.event == Dequ && t.l3Prot == 0xFC && (t.ack.flags & 1)) { // FLAG_CNP
            cnp[t.dip]++;
        }
    }
    unsigned long R = 0, C = 0, N = 0;
    for (auto &k : rx) {
        printf("%08x rx %lu ce %lu cnp %lu\n", k.first, k.second, ce[k.first], cnp[k.first]);
        R += k.second, C += ce[k.first], N += cnp[k.first];
    }
    printf("total rx %lu ce %lu cnp %lu\n", R, C, N);
    return 0;
}
