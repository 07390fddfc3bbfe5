#include "RunColour.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

#include <array>

namespace ty {

namespace {
constexpr std::array<QRgb, 10> kTableau10{
    0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac,
};
} // namespace

QColor runColour(RunId run)
{
    if (run <= 0)
        return QColor(0x80, 0x80, 0x80);
    return QColor::fromRgb(kTableau10[std::size_t((run - 1) % qint64(kTableau10.size()))]);
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
