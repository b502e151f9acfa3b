-- Wireshark dissector for what feroce and the Lite-RoCEv2 firmware put on the wire that
-- Wireshark does not know:
--   * the side channel (the firmware's UDP connection manager): 64-byte messages on UDP 17185
--     (front-end), 17186 (feroce's default reply port) and 34661 (0x8765, the firmware's reply
--     source port); layout in include/feroce/sidechannel.h and docs/wireshark.md; and the
--     event-building messages feroce adds on it (request code 5, docs/event-building.md);
--   * the RoCEv2 CNP (BTH opcode 0x81), which Wireshark 4.0's InfiniBand dissector shows as
--     "Unknown OpCode": every other RoCEv2 packet still goes to Wireshark's own dissector.
-- Use: wireshark -X lua_script:feroce.lua, or copy it to ~/.local/lib/wireshark/plugins/.

local SC_PORTS = { 17185, 17186, 34661 }
local dissect_eb -- event-building messages share the side channel's ports (below)
local SC_LEN = 64
local ROCE_PORT = 4791
local OP_CNP = 0x81

-- ---- side channel ----

local requests = { [0] = "NULL", [1] = "OPEN_QP", [2] = "SEND_QP_INFO", [3] = "MODIFY_QP_RTS",
                   [4] = "CLOSE_QP", [7] = "ERROR" }
local acks = { [0] = "NULL", [1] = "ACK", [2] = "NO_QP", [3] = "NAK", [7] = "ERROR" }

local sc = Proto("feroce_sc", "feroce side channel (Lite-RoCEv2 connection manager)")
local f = {
    flags = ProtoField.uint8("feroce_sc.flags", "Flags", base.HEX),
    info_valid = ProtoField.bool("feroce_sc.info_valid", "Info valid", 8, nil, 0x01),
    request = ProtoField.uint8("feroce_sc.request", "Request", base.DEC, requests, 0x0E),
    ack_valid = ProtoField.bool("feroce_sc.ack_valid", "Ack valid", 8, nil, 0x10),
    ack = ProtoField.uint8("feroce_sc.ack", "Ack", base.DEC, acks, 0xE0),
    reply_port = ProtoField.uint16("feroce_sc.reply_port", "Reply port", base.DEC),
    tx_flags = ProtoField.uint8("feroce_sc.tx.flags", "Tx flags", base.HEX),
    tx_valid = ProtoField.bool("feroce_sc.tx.valid", "Tx valid", 8, nil, 0x01),
    tx_start = ProtoField.bool("feroce_sc.tx.start", "Start", 8, nil, 0x02),
    tx_imm = ProtoField.bool("feroce_sc.tx.immediate", "With immediate", 8, nil, 0x04),
    tx_write = ProtoField.bool("feroce_sc.tx.write", "RDMA WRITE (else SEND)", 8, nil, 0x08),
    tx_resv = ProtoField.uint8("feroce_sc.tx.reserved", "Reserved", base.HEX, nil, 0xF0),
    tx_len = ProtoField.uint32("feroce_sc.tx.msg_len", "Message length (bytes)", base.DEC),
    tx_count = ProtoField.uint32("feroce_sc.tx.msg_count", "Message count", base.DEC),
    tx_gap = ProtoField.uint32("feroce_sc.tx.gap", "Gap", base.DEC),
}
-- The two QP-info blocks (loc = the sender's QP, rem = the peer's), 24 bytes each.
for _, side in ipairs({ "loc", "rem" }) do
    f[side .. "_qpn"] = ProtoField.uint32("feroce_sc." .. side .. ".qpn", "QPN", base.HEX)
    f[side .. "_psn"] = ProtoField.uint32("feroce_sc." .. side .. ".psn", "PSN", base.DEC)
    f[side .. "_rkey"] = ProtoField.uint32("feroce_sc." .. side .. ".rkey", "R_Key", base.HEX)
    f[side .. "_va"] = ProtoField.uint64("feroce_sc." .. side .. ".va", "Virtual address", base.HEX)
    f[side .. "_ip"] = ProtoField.ipv4("feroce_sc." .. side .. ".ip", "IPv4 address")
end
local pf = {}
for _, v in pairs(f) do pf[#pf + 1] = v end
sc.fields = pf

local e_len = ProtoExpert.new("feroce_sc.bad_length", "Side-channel message is not 64 bytes",
                              expert.group.MALFORMED, expert.severity.ERROR)
local e_slot = ProtoExpert.new("feroce_sc.bad_slot", "24-bit field's first byte is not zero",
                               expert.group.MALFORMED, expert.severity.WARN)
local e_type = ProtoExpert.new("feroce_sc.bad_type", "Unknown request or ack type",
                               expert.group.MALFORMED, expert.severity.WARN)
local e_resv = ProtoExpert.new("feroce_sc.bad_reserved", "Reserved tx flag bits set",
                               expert.group.PROTOCOL, expert.severity.NOTE)
sc.experts = { e_len, e_slot, e_type, e_resv }

local function add_info(tree, tvb, off, side)
    local t = tree:add(sc, tvb(off, 24), side == "loc" and "Sender's QP (loc)" or "Peer's QP (rem)")
    local qpn = t:add(f[side .. "_qpn"], tvb(off, 4))
    if tvb(off, 1):uint() ~= 0 then qpn:add_proto_expert_info(e_slot) end
    local psn = t:add(f[side .. "_psn"], tvb(off + 4, 4))
    if tvb(off + 4, 1):uint() ~= 0 then psn:add_proto_expert_info(e_slot) end
    t:add(f[side .. "_rkey"], tvb(off + 8, 4))
    t:add(f[side .. "_va"], tvb(off + 12, 8))
    t:add(f[side .. "_ip"], tvb(off + 20, 4))
    return tvb(off, 4):uint()
end

local function add_tx(tree, tvb)
    local t = tree:add(sc, tvb(51, 13), "Transfer metadata (tx-meta)")
    local ft = t:add(f.tx_flags, tvb(51, 1))
    for _, k in ipairs({ "tx_valid", "tx_start", "tx_imm", "tx_write", "tx_resv" }) do
        ft:add(f[k], tvb(51, 1))
    end
    if bit.band(tvb(51, 1):uint(), 0xF0) ~= 0 then ft:add_proto_expert_info(e_resv) end
    t:add(f.tx_len, tvb(52, 4))
    t:add(f.tx_count, tvb(56, 4))
    t:add(f.tx_gap, tvb(60, 4))
    return tvb(51, 1):uint()
end

local function sc_summary(flags, txf, loc_qpn, rem_qpn)
    local parts = {}
    if bit.band(flags, 0x01) ~= 0 then
        local req = bit.rshift(bit.band(flags, 0x0E), 1)
        parts[#parts + 1] = requests[req] or string.format("request %d", req)
    end
    if bit.band(flags, 0x10) ~= 0 then
        local ack = bit.rshift(bit.band(flags, 0xE0), 5)
        parts[#parts + 1] = "reply " .. (acks[ack] or string.format("ack %d", ack))
    end
    if bit.band(txf, 0x01) ~= 0 then
        parts[#parts + 1] = bit.band(txf, 0x02) ~= 0 and "tx-meta start" or "tx-meta stop"
    end
    if #parts == 0 then parts[1] = "empty" end
    return string.format("%s, loc QPN 0x%x, rem QPN 0x%x", table.concat(parts, ", "), loc_qpn,
                         rem_qpn)
end

function sc.dissector(tvb, pinfo, tree)
    if tvb:len() == SC_LEN and tvb(0, 1):uint() == 0x0B then -- request 5: event building
        return dissect_eb(tvb, pinfo, tree)
    end
    pinfo.cols.protocol = "feroce-SC"
    local root = tree:add(sc, tvb(), "feroce side channel")
    if tvb:len() ~= SC_LEN then
        root:add_proto_expert_info(e_len)
        pinfo.cols.info = string.format("side channel, bad length %d", tvb:len())
        return tvb:len()
    end
    local flags = tvb(0, 1):uint()
    local fl = root:add(f.flags, tvb(0, 1))
    for _, k in ipairs({ "info_valid", "request", "ack_valid", "ack" }) do fl:add(f[k], tvb(0, 1)) end
    local req = bit.rshift(bit.band(flags, 0x0E), 1)
    local ack = bit.rshift(bit.band(flags, 0xE0), 5)
    if (bit.band(flags, 0x01) ~= 0 and not requests[req]) or
       (bit.band(flags, 0x10) ~= 0 and not acks[ack]) then
        fl:add_proto_expert_info(e_type)
    end
    local loc_qpn = add_info(root, tvb, 1, "loc")
    local rem_qpn = add_info(root, tvb, 25, "rem")
    root:add(f.reply_port, tvb(49, 2))
    local txf = add_tx(root, tvb)
    pinfo.cols.info = sc_summary(flags, txf, loc_qpn, rem_qpn)
    return SC_LEN
end

local udp_port = DissectorTable.get("udp.port")
for _, p in ipairs(SC_PORTS) do udp_port:add(p, sc) end

-- ---- event building (docs/event-building.md): request code 5 on the side channel ----

local eb_types = { [1] = "ANNOUNCE", [2] = "PROGRESS", [3] = "TABLE", [4] = "RING", [5] = "JOIN",
                   [6] = "START" }
local eb_policies = { [0] = "tables (availability)", [1] = "round-robin" }
local eb = Proto("feroce_eb", "feroce event building")
local e = {
    type = ProtoField.uint8("feroce_eb.type", "Message", base.DEC, eb_types),
    version = ProtoField.uint8("feroce_eb.version", "Version", base.DEC),
    sender = ProtoField.uint16("feroce_eb.sender", "Sender (builder, source or manager id)", base.DEC),
    slots = ProtoField.uint32("feroce_eb.slots", "Ring slots", base.DEC),
    released = ProtoField.uint64("feroce_eb.released", "Released (ring positions, cumulative)", base.DEC),
    newest = ProtoField.uint64("feroce_eb.newest_event", "Newest event opened", base.DEC),
    next_event = ProtoField.uint64("feroce_eb.next_event", "Next event to send", base.DEC),
    busy = ProtoField.uint64("feroce_eb.busy_events", "Busy events (cumulative)", base.DEC),
    first_event = ProtoField.uint64("feroce_eb.first_event", "First event", base.DEC),
    epoch = ProtoField.uint32("feroce_eb.epoch", "Epoch", base.DEC),
    skipped = ProtoField.uint32("feroce_eb.skipped", "Skipped events before it", base.DEC),
    n_runs = ProtoField.uint8("feroce_eb.runs", "Runs", base.DEC),
    run_builder = ProtoField.uint16("feroce_eb.run.builder", "Builder", base.DEC),
    run_slot = ProtoField.uint16("feroce_eb.run.first_slot", "First slot", base.DEC),
    run_count = ProtoField.uint16("feroce_eb.run.count", "Events", base.DEC),
    qpn = ProtoField.uint32("feroce_eb.qpn", "Builder's QPN", base.HEX),
    slot_bytes = ProtoField.uint64("feroce_eb.slot_bytes", "Slot bytes", base.DEC),
    policy = ProtoField.uint8("feroce_eb.policy", "Policy", base.DEC, eb_policies),
    builders = ProtoField.uint16("feroce_eb.builders", "Builders", base.DEC),
    frag_max = ProtoField.uint32("feroce_eb.frag_max_bytes", "Fragment maximum (bytes)", base.DEC),
    builder = ProtoField.uint16("feroce_eb.builder", "Builder", base.DEC),
    join_flags = ProtoField.uint8("feroce_eb.join_flags", "Flags", base.HEX),
    join_known = ProtoField.bool("feroce_eb.join_flags.first_known", "Builder's first event known", 8,
                                 nil, 0x01),
    can_give = ProtoField.uint64("feroce_eb.can_give", "First event it can give (0: every one)", base.DEC),
}
local epf = {}
for _, v in pairs(e) do epf[#epf + 1] = v end
eb.fields = epf

local function eb_table(t, tvb)
    t:add(e.first_event, tvb(8, 8))
    t:add(e.epoch, tvb(16, 4))
    t:add(e.skipped, tvb(20, 4))
    t:add(e.n_runs, tvb(24, 1))
    local first, parts = tvb(8, 8):uint64(), {}
    for i = 0, math.min(tvb(24, 1):uint(), 5) - 1 do
        local off = 30 + 6 * i
        local r = t:add(eb, tvb(off, 6), string.format("Run %d", i + 1))
        r:add(e.run_builder, tvb(off, 2))
        r:add(e.run_slot, tvb(off + 2, 2))
        r:add(e.run_count, tvb(off + 4, 2))
        parts[#parts + 1] = string.format("%d x b%d", tvb(off + 4, 2):uint(), tvb(off, 2):uint())
    end
    return string.format("from event %s: %s", tostring(first), table.concat(parts, ", "))
end

-- A front-end's answer to a late builder's RING (round-robin): what it can still give, and
-- the builder's first event once a START told it.
local function eb_join(t, tvb)
    t:add(e.builder, tvb(8, 2))
    local fl = t:add(e.join_flags, tvb(10, 1))
    fl:add(e.join_known, tvb(10, 1))
    t:add(e.can_give, tvb(16, 8))
    local what = string.format("to b%d, gives from event %s", tvb(8, 2):uint(),
                               tostring(tvb(16, 8):uint64()))
    if bit.band(tvb(10, 1):uint(), 0x01) ~= 0 then
        t:add(e.first_event, tvb(32, 8))
        what = what .. string.format(", echoes start %s", tostring(tvb(32, 8):uint64()))
    end
    return what
end

dissect_eb = function(tvb, pinfo, tree)
    pinfo.cols.protocol = "feroce-EB"
    local t = tree:add(eb, tvb(), "feroce event building")
    local ty = tvb(2, 1):uint()
    t:add(e.type, tvb(2, 1))
    t:add(e.version, tvb(3, 1))
    t:add(e.sender, tvb(6, 2))
    local what = ""
    if ty == 1 then
        t:add(e.slots, tvb(8, 4))
        t:add(e.released, tvb(16, 8))
        t:add(e.newest, tvb(32, 8))
        what = string.format("released %s of %d slots", tostring(tvb(16, 8):uint64()), tvb(8, 4):uint())
    elseif ty == 2 then
        t:add(e.next_event, tvb(8, 8))
        t:add(e.busy, tvb(16, 8))
        what = string.format("next event %s, busy %s", tostring(tvb(8, 8):uint64()),
                             tostring(tvb(16, 8):uint64()))
    elseif ty == 3 then
        what = eb_table(t, tvb)
    elseif ty == 4 then
        t:add(e.slots, tvb(8, 4))
        t:add(e.qpn, tvb(12, 4))
        t:add(e.slot_bytes, tvb(16, 8))
        t:add(e.policy, tvb(24, 1))
        t:add(e.builders, tvb(26, 2))
        t:add(e.frag_max, tvb(32, 4))
        t:add(e.first_event, tvb(40, 8))
        what = string.format("QPN 0x%x, %d slots of %s bytes, %s", tvb(12, 4):uint(),
                             tvb(8, 4):uint(), tostring(tvb(16, 8):uint64()),
                             eb_policies[tvb(24, 1):uint()] or "unknown policy")
    elseif ty == 5 then
        what = eb_join(t, tvb)
    elseif ty == 6 then
        t:add(e.builders, tvb(8, 2))
        t:add(e.first_event, tvb(16, 8))
        what = string.format("ring starts at event %s of %d builders", tostring(tvb(16, 8):uint64()),
                             tvb(8, 2):uint())
    end
    pinfo.cols.info = string.format("EB %s from %d: %s", eb_types[ty] or "unknown", tvb(6, 2):uint(), what)
    return tvb:len()
end

-- ---- RoCEv2 CNP ----

local cnp = Proto("feroce_cnp", "RoCEv2 Congestion Notification Packet")
local c = {
    opcode = ProtoField.uint8("feroce_cnp.opcode", "Opcode", base.HEX),
    pkey = ProtoField.uint16("feroce_cnp.pkey", "Partition key", base.HEX),
    fecn = ProtoField.bool("feroce_cnp.fecn", "FECN", 8, nil, 0x80),
    becn = ProtoField.bool("feroce_cnp.becn", "BECN", 8, nil, 0x40),
    destqp = ProtoField.uint24("feroce_cnp.destqp", "Destination QP (the notified sender)", base.HEX),
    psn = ProtoField.uint24("feroce_cnp.psn", "PSN", base.DEC),
    reserved = ProtoField.bytes("feroce_cnp.reserved", "Reserved (16 bytes)"),
    icrc = ProtoField.uint32("feroce_cnp.icrc", "ICRC", base.HEX),
}
cnp.fields = { c.opcode, c.pkey, c.fecn, c.becn, c.destqp, c.psn, c.reserved, c.icrc }
local e_cnp_len = ProtoExpert.new("feroce_cnp.bad_length", "CNP is not BTH + 16 bytes + ICRC",
                                  expert.group.MALFORMED, expert.severity.ERROR)
local e_cnp_pad = ProtoExpert.new("feroce_cnp.nonzero_reserved", "CNP reserved bytes not zero",
                                  expert.group.PROTOCOL, expert.severity.WARN)
cnp.experts = { e_cnp_len, e_cnp_pad }

local CNP_LEN = 12 + 16 + 4

local function dissect_cnp(tvb, pinfo, tree)
    pinfo.cols.protocol = "RoCEv2 CNP"
    local t = tree:add(cnp, tvb(), "RoCEv2 CNP")
    if tvb:len() ~= CNP_LEN then t:add_proto_expert_info(e_cnp_len) end
    if tvb:len() < 12 then return tvb:len() end
    t:add(c.opcode, tvb(0, 1))
    t:add(c.pkey, tvb(2, 2))
    t:add(c.fecn, tvb(4, 1))
    t:add(c.becn, tvb(4, 1))
    t:add(c.destqp, tvb(5, 3))
    t:add(c.psn, tvb(9, 3))
    if tvb:len() >= 28 then
        local r = t:add(c.reserved, tvb(12, 16))
        for i = 12, 27 do
            if tvb(i, 1):uint() ~= 0 then r:add_proto_expert_info(e_cnp_pad) break end
        end
    end
    if tvb:len() >= CNP_LEN then t:add_le(c.icrc, tvb(28, 4)) end
    pinfo.cols.info = string.format("CNP to QP 0x%x%s", tvb(5, 3):uint(),
                                    bit.band(tvb(4, 1):uint(), 0x40) ~= 0 and " (BECN)" or "")
    return tvb:len()
end

-- Wrap whatever dissects UDP 4791 today (Wireshark's InfiniBand/RoCEv2): CNPs come here, every
-- other packet goes on to it unchanged.
local roce_inner = udp_port:get_dissector(ROCE_PORT)
local roce = Proto("feroce_roce", "RoCEv2 (feroce additions)")
function roce.dissector(tvb, pinfo, tree)
    if tvb:len() >= 1 and tvb(0, 1):uint() == OP_CNP then return dissect_cnp(tvb, pinfo, tree) end
    if roce_inner then return roce_inner:call(tvb, pinfo, tree) end
    return 0
end
udp_port:add(ROCE_PORT, roce)
