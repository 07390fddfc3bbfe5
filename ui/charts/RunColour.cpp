#include "RunColour.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

#include <array>

namespace ty {

namespace {
// colorcet's glasbey_category10 (assets/Glasbey/glasbey_category10_n256.csv),
// its first 64 entries as 8-bit sRGB (x 255, rounded). Colour maps by Peter
// Kovesi, CC BY 4.0.
constexpr std::array<QRgb, 64> kGlasbeyCategory10{
        0x1f77b4,
        0xff7f0e,
        0x2ca02c,
        0xd62728,
        0x9467bd,
        0x8c564b,
        0xe377c2,
        0x7f7f7f,
        0xbcbd22,
        0x17becf,
        0x3a0183,
        0x004301,
        0x490000,
        0x0fffa9,
        0x7d006d,
        0xbcbcff,
        0x003e4a,
        0xd8afa2,
        0x6b6500,
        0x007458,
        0x6126ff,
        0xffff9a,
        0x3a2635,
        0x8cb894,
        0xcd0081,
        0x94fcff,
        0x91ff00,
        0x4a3200,
        0x565371,
        0x8f002c,
        0xad8944,
        0x000037,
        0xffc0f3,
        0xff6f76,
        0x798cff,
        0xdd00ff,
        0x8000be,
        0x525649,
        0x0000dc,
        0xffbf60,
        0x182618,
        0xbec9cf,
        0xaf98b5,
        0xb75700,
        0x027000,
        0xcd88ff,
        0x1dd646,
        0xc0ecc4,
        0x954f7f,
        0x7b2d00,
        0x00a388,
        0x7a98b5,
        0xba7c7d,
        0x1c0006,
        0x6f8957,
        0x52002e,
        0x00adff,
        0x8fd4ff,
        0x210036,
        0x346470,
        0x00d4b1,
        0x6c3649,
        0x8b9500,
        0x184e87,
};
} // namespace

QColor runColour(RunId run)
{
    if (run <= 0)
        return QColor(0x80, 0x80, 0x80);
    return QColor::fromRgb(kGlasbeyCategory10[std::size_t((run - 1) % qint64(kGlasbeyCategory10.size()))]);
}

QIcon runColourIcon(RunId run)
{
    static QHash<QRgb, QIcon> cache; // GUI thread only
    const QColor c = runColour(run);
    auto it = cache.constFind(c.rgb());
    if (it != cache.cend())
        return *it;
    QPixmap pm(12, 12);
    pm.fill(Qt::transparent);
    {
        QPainter p(&pm);
        p.setPen(c.darker(130));
        p.setBrush(c);
        p.drawRect(1, 1, 9, 9);
    }
    QIcon icon(pm);
    cache.insert(c.rgb(), icon);
    return icon;
}

} // namespace ty
