/* Internal structures of the simulator, shared by its files (one per role), each object's in
 * its own header:
 *   pkt.h (frames), port.h (ports, output queues), switch.h (routes, buffer totals), host.h (NIC,
 *   QP slots, flows), state.h (struct fe_sim, events, rng), engine.h (event queue), pool.h
 *   (frame pool), link.h (serialization, propagation, frame sizes), buffer.h (shared-buffer
 *   admission), pfc.h (pause), qdisc.h (egress queue disciplines), ecn.h (the known ones), phases.h
 * (window, phases), units.h (errors, parsers). This umbrella includes them all. */
#ifndef FE_SIM_INTERNAL_H
#define FE_SIM_INTERNAL_H

#include "sim/ecn.h"
#include "sim/engine.h"
#include "sim/host.h"
#include "sim/link.h"
#include "sim/pfc.h"
#include "sim/phases.h"
#include "sim/pkt.h"
#include "sim/pool.h"
#include "sim/qdisc.h"
#include "sim/port.h"
#include "sim/state.h"
#include "sim/switch.h"
#include "sim/units.h"

#endif
