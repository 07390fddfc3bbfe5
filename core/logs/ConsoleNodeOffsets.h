#pragma once

#include "core/common/Result.h"

#include <QList>
#include <QString>

namespace ty {

// Where a run's local console copy stands in the node's console file.
//
// The copy is the node's file byte for byte (offset for offset) until that
// file is truncated on the node (`: > console.log` to free disk, logrotate's
// copytruncate; AgentClient::consoleTruncated). The copy then keeps every
// byte it had and the node's new content is appended after it, so from that
// point on a local offset and a node offset differ by a constant. Each such
// rebase is one entry: "from local offset L on, the copy continues the
// node's console at node offset N" (N is 0: the new content from its start),
// with the truncation's generation (PROTOCOL.md `tail`), which the next tail
// of the run sends so that the agent can tell a truncation the copy has not
// followed even where the new content has outgrown the copy's offset.
// The last entry maps offsets at and after its L; without any entry the two
// are equal, which is the case for every console never truncated on its
// node, so nothing changes for those.
//
// Stored offsets stay local: the run's consoleOffset in the store, the copy's
// size (how far it was fetched), console.times and the copy's console.stderr
// all count bytes of the copy. Only the agent's `tail` offset and the offsets
// of its `output` events are node offsets; RunIngest converts at that border
// and the engine asks to resume at toNode(copy size).
//
// File (ours): `console.node` beside console.log (pathFor()), ASCII, one
// entry per line: "<local offset> <node offset> <generation>\n", in
// increasing local order; absent = no entry. It is rewritten whole
// (QSaveFile: write and rename) before the first byte of new content is
// appended to the copy, so the copy never holds bytes its entries do not
// place. It lives beside the copy rather than in the result store because
// it describes the copy (a copy deleted by hand takes it along), like
// console.times and console.stderr; the store's schema stays as it is.
//
// Not thread safe; a value type.
class ConsoleNodeOffsets final {
public:
    struct Entry {
        qint64 local = 0;
        qint64 node = 0;
        qint64 generation = 0;
        bool operator==(const Entry&) const = default;
    };

    // "<dir>/console.log" -> "<dir>/console.node"; another name gets ".node" appended.
    static QString pathFor(const QString& consolePath);

    // Reads `path`; a missing file has no entries. Errors (unreadable, a
    // malformed line, offsets out of order) name the file and line.
    static Result<ConsoleNodeOffsets> load(const QString& path);
    // Writes every entry to `path` (replaced atomically). Errors name the file.
    Result<void> save(const QString& path) const;

    // From local offset `local` on, the copy continues the node's file at
    // `node`, after truncation `generation`. Entries at or after `local` are
    // replaced (that part of the copy is rewritten).
    void rebase(qint64 local, qint64 node, qint64 generation);

    // The last entry's: where the current node content starts in the copy.
    qint64 localBase() const { return m_entries.isEmpty() ? 0 : m_entries.back().local; }
    qint64 nodeBase() const { return m_entries.isEmpty() ? 0 : m_entries.back().node; }
    // The generation of the node's current content (0: never truncated).
    qint64 generation() const { return m_entries.isEmpty() ? 0 : m_entries.back().generation; }
    // Conversions for offsets of the current node content (local >= localBase()).
    qint64 toNode(qint64 local) const { return local - localBase() + nodeBase(); }
    qint64 toLocal(qint64 node) const { return node - nodeBase() + localBase(); }

    const QList<Entry>& entries() const { return m_entries; }

private:
    QList<Entry> m_entries; // strictly increasing local offsets
};

} // namespace ty
