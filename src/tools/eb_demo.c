/* feroce demo --event-building: placeholder until the demo is written. */
#include "tools/eb_wire.h"
