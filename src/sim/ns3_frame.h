/* Frame sizes of HPCC's ns-3 model (host.frames hpcc-ns3, --ns3-compat). */
#ifndef FE_SIM_NS3_FRAME_H
#define FE_SIM_NS3_FRAME_H

/* The headers ahead of a data packet's INT header and payload there: PPP (14 bytes in that
 * model, Ethernet-sized), IPv4, UDP and SeqTs. */
#define SIM_NS3_DATA_HDR_BYTES 48u

#endif
