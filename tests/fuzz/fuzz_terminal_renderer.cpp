// TerminalRenderer: arbitrary bytes at an arbitrary width, fed whole and in
// random pieces (with commitSettledRows() between pieces, as the live follower
// does not -- so only the whole/pieces comparison without it is checked).
#include "FuzzCommon.h"
#include "core/logs/TerminalRenderer.h"

#include <cstdint>

using namespace ty;

namespace {

QList<ConsoleLine> render(
        QByteArrayView data, int width, int maxChars, int liveRows, const QList<QByteArrayView>& parts)
{
    TerminalRenderer r(width, maxChars, liveRows);
    QList<ConsoleLine> out;
    for (QByteArrayView p : parts) {
        r.feed(p);
        out += r.takeCommitted();
        (void)r.pendingLines();
    }
    r.finish();
    out += r.takeCommitted();
    Q_UNUSED(data);
    return out;
}

bool same(const QList<ConsoleLine>& a, const QList<ConsoleLine>& b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (a[i].text != b[i].text || a[i].spans != b[i].spans || a[i].byteOffset != b[i].byteOffset
                || a[i].truncated != b[i].truncated || a[i].fullLength != b[i].fullLength
                || a[i].wrapped != b[i].wrapped)
            return false;
    }
    return true;
}

} // namespace

TRAINYARD_FUZZ_TARGET(terminal_renderer)
{
    if (size < 3)
        return 0;
    const int width = bytes[0] % 4 == 0 ? 0 : 1 + bytes[0] % 200;
    const int maxChars = 1 + bytes[1] % 300;
    const int liveRows = 1 + bytes[2] % 70;
    const QByteArrayView data(reinterpret_cast<const char*>(bytes + 3), qsizetype(size - 3));
    const QList<ConsoleLine> whole = render(data, width, maxChars, liveRows, {data});
    const QList<ConsoleLine> split = render(data, width, maxChars, liveRows, fuzz::pieces(data, bytes[0] ^ bytes[1]));
    if (!same(whole, split))
        fuzz::invariantBroken("TerminalRenderer: a different split of the stream gave different rows");
    // The early-commit paths, which are allowed to differ from the whole-stream result.
    TerminalRenderer r(width, maxChars, liveRows);
    for (QByteArrayView p : fuzz::pieces(data, bytes[2])) {
        r.feed(p);
        r.commitSettledRows();
        if (p.size() % 3 == 0)
            r.commitAboveCursor();
        (void)r.takeCommitted();
    }
    r.finish();
    for (const ConsoleLine& l : r.takeCommitted()) {
        if (l.text.size() > 2 * maxChars + 8)
            fuzz::invariantBroken("TerminalRenderer: a row is longer than maxLineChars");
    }
    return 0;
}
