"""A model of the Lite-RoCEv2 firmware's side channel, written from its observed rules, to test
feroce's host role (`feroce recv`) against the board's behaviour rather than against feroce's
own front-end:
  - it listens on UDP 17185 and answers from source port 0x8765 (34661), to the request's reply
    port (port 0 means port 0: such a reply is not deliverable, and counted);
  - OPEN_QP pops a QPN from a pool (4 by default) and moves that QP straight to RTS; a duplicate
    OPEN_QP pops another QPN; the ACK's loc PSN is 0;
  - MODIFY_QP_RTS on a QP that is already RTS is answered ERROR (ack type 7); a MODIFY naming a
    QPN outside the pool gets no reply at all;
  - NO_QP and NAK replies repeat the previous reply's fields, with only the ack type changed;
  - SEND_QP_INFO and ERROR get no reply; CLOSE_QP frees the QP and is ACKed;
  - tx-meta finds the QP by rem QPN only; padding and reserved bits are ignored;
  - tx-meta is never answered; a start while that QP's transfer runs is ignored (the RTL has a
    data generator per QP, which loads a request only when no transfer is ongoing), so a
    host's resent start is harmless; a start after the transfer ended starts it all again.
The data plane is `feroce send` in manual-peer mode, started on a tx-meta start with the
host's QP parameters (the board's RoCEv2 engine is not what is under test here).

usage: fw_model.py FEROCE_BIN FE_IP STATE_FILE [--pool N] [--drop-open-replies N]
                   [--drop-tx-meta N]
--drop-tx-meta N loses the first N tx-meta starts (as a lost datagram would be).
Runs until SIGTERM; then writes a JSON summary to STATE_FILE (QPs allocated, still open,
replies by ack type, undeliverable replies, streams started, tx-meta starts received, lost
and ignored)."""
import json
import signal
import socket
import struct
import subprocess
import sys

FEROCE, FE_IP, STATE = sys.argv[1:4]
args = sys.argv[4:]
POOL = int(args[args.index("--pool") + 1]) if "--pool" in args else 4
DROP_OPEN = int(args[args.index("--drop-open-replies") + 1]) if "--drop-open-replies" in args else 0
DROP_META = int(args[args.index("--drop-tx-meta") + 1]) if "--drop-tx-meta" in args else 0
FW_PORT, FW_REPLY_SRC = 17185, 0x8765
FIRST_QPN = 0x100
REQ_OPEN, REQ_INFO, REQ_MODIFY, REQ_CLOSE, REQ_ERROR = 1, 2, 3, 4, 7
ACK_ACK, ACK_NO_QP, ACK_NAK, ACK_ERROR = 1, 2, 3, 7
FW_RKEY, FW_VA = 0x234, 0x12341242

free = [FIRST_QPN + i for i in range(POOL)]
qps = {}  # qpn -> {"host": (qpn, psn, rkey, va, ip), "host_addr": ip}
stats = {"allocated": 0, "replies": {}, "undeliverable": 0, "streams": 0, "ignored": 0,
         "modify_out_of_range": 0, "open_replies_dropped": 0, "tx_meta_starts": 0,
         "tx_meta_dropped": 0, "starts_ignored": 0}
senders = []
streaming = {}  # qpn -> the sender of its transfer
last_reply = bytearray(64)
ipn = lambda a: struct.unpack(">L", socket.inet_aton(a))[0]
ipa = lambda n: socket.inet_ntoa(struct.pack(">L", n))

rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind((FE_IP, FW_PORT))
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
tx.bind((FE_IP, FW_REPLY_SRC))


def info(b, off):
    qpn, psn, rkey, va, ip = struct.unpack(">LLLQL", b[off:off + 24])
    return qpn & 0xFFFFFF, psn & 0xFFFFFF, rkey, va, ip  # the slot bytes are ignored


def pack_info(qpn, psn, rkey, va, ip):
    return struct.pack(">LLLQL", qpn, psn, rkey, va, ip)


def reply(req, ack, loc, rem, port, addr):
    global last_reply
    msg = bytearray(64)
    msg[0] = 1 | (req << 1) | 0x10 | (ack << 5)
    msg[1:25] = pack_info(*loc)
    msg[25:49] = pack_info(*rem)
    send_reply(msg, port, addr, ack)


def firmware_error(ack, port, addr):
    """NO_QP / NAK: the previous reply's fields, only the ack type changed."""
    msg = bytearray(last_reply)
    msg[0] = (msg[0] & 0x0E) | 0x01 | 0x10 | (ack << 5)
    send_reply(msg, port, addr, ack)


def send_reply(msg, port, addr, ack):
    global last_reply
    last_reply = bytes(msg)
    stats["replies"][str(ack)] = stats["replies"].get(str(ack), 0) + 1
    if port == 0:
        stats["undeliverable"] += 1
        return
    tx.sendto(bytes(msg), (addr, port))


def start_stream(qpn, q, length, count):
    hq, hpsn, hrkey, hva, hip = q["host"]
    cmd = [FEROCE, "send", "--bind", FE_IP, "--sc", FE_IP + ":0", "--peer", ipa(hip),
           "--peer-qpn", str(hq), "--peer-psn", str(hpsn), "--rkey", str(hrkey), "--va",
           str(hva), "--qpn", str(qpn), "--msg-size", str(length), "--count", str(count),
           "--line-rate", "2Gbps", "--quiet", "--interval", "0"]
    senders.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    streaming[qpn] = senders[-1]
    stats["streams"] += 1


def handle(b, addr):
    if len(b) < 64:
        stats["ignored"] += 1
        return
    flags, txf = b[0], b[51]
    req = (flags >> 1) & 7 if flags & 1 else 0
    loc, rem = info(b, 1), info(b, 25)
    port = struct.unpack(">H", b[49:51])[0]
    if req == REQ_OPEN:
        if not free:
            firmware_error(ACK_NO_QP, port, addr)
            return
        qpn = free.pop(0)
        stats["allocated"] += 1
        qps[qpn] = {"host": loc, "host_addr": addr}
        if stats["open_replies_dropped"] < DROP_OPEN:
            stats["open_replies_dropped"] += 1
            return
        reply(REQ_OPEN, ACK_ACK, (qpn, 0, FW_RKEY, FW_VA, ipn(FE_IP)), loc, port, addr)
    elif req == REQ_MODIFY:
        qpn = rem[0]
        if not FIRST_QPN <= qpn < FIRST_QPN + POOL:
            stats["modify_out_of_range"] += 1
        elif qpn in qps:
            reply(REQ_MODIFY, ACK_ERROR, (qpn, 0, FW_RKEY, FW_VA, ipn(FE_IP)), loc, port, addr)
        else:
            firmware_error(ACK_NO_QP, port, addr)
    elif req == REQ_CLOSE:
        qpn = rem[0]
        if qpn in qps:
            del qps[qpn]
            free.append(qpn)
            reply(REQ_CLOSE, ACK_ACK, (qpn, 0, FW_RKEY, FW_VA, ipn(FE_IP)), loc, port, addr)
        else:
            firmware_error(ACK_NO_QP, port, addr)
    elif req == REQ_INFO:
        if rem[0] in qps:
            qps[rem[0]]["host"] = loc
    if txf & 1 and txf & 2:  # tx-meta start: the QP by rem QPN only
        tx_meta_start(rem[0], b)


def tx_meta_start(qpn, b):
    stats["tx_meta_starts"] += 1
    if stats["tx_meta_dropped"] < DROP_META:
        stats["tx_meta_dropped"] += 1
        return
    running = streaming.get(qpn)
    if running is not None and running.poll() is None:  # its generator's transfer_ongoing
        stats["starts_ignored"] += 1
        return
    q = qps.get(qpn)
    length, count = struct.unpack(">LL", b[52:60])
    if q:
        start_stream(qpn, q, length, count)


def finish(*_):
    for s in senders:
        try:
            s.wait(timeout=30)
        except subprocess.TimeoutExpired:
            s.kill()
    stats["open"] = sorted(qps)
    stats["senders_ok"] = all(s.returncode == 0 for s in senders)
    with open(STATE, "w") as f:
        json.dump(stats, f)
    sys.exit(0)


signal.signal(signal.SIGTERM, finish)
rx.settimeout(0.2)
while True:
    try:
        data, (src, _) = rx.recvfrom(2048)
    except socket.timeout:
        continue
    handle(data, src)
