#include "RunStateStyle.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace ty {

QColor RunStateStyle::color(RunState state)
{
    switch (state) {
    case RunState::Queued: return QColor(0x75, 0x75, 0x75);
    case RunState::Held: return QColor(0x9e, 0x9d, 0x24);
    case RunState::Starting: return QColor(0x1e, 0x88, 0xe5);
    case RunState::Running: return QColor(0x15, 0x65, 0xc0);
    case RunState::Succeeded: return QColor(0x2e, 0x7d, 0x32);
    case RunState::Failed: return QColor(0xc6, 0x28, 0x28);
    case RunState::Cancelled: return QColor(0xef, 0x6c, 0x00);
    case RunState::Unknown: return QColor(0x8e, 0x24, 0xaa);
    }
    return QColor(Qt::gray);
}

QIcon RunStateStyle::icon(RunState state)
{
    static QHash<int, QIcon> cache;
    const int key = int(state);
    auto it = cache.constFind(key);
    if (it != cache.cend())
        return *it;
    QPixmap pm(16, 16);
    pm.fill(Qt::transparent);
    {
        QPainter p(&pm);
        p.setRenderHint(QPainter::Antialiasing);
        const QColor c = color(state);
        p.setPen(QPen(c.darker(130), 1));
        if (state == RunState::Running || state == RunState::Starting) {
            p.setBrush(c);
            p.drawEllipse(QRectF(2.5, 2.5, 11, 11));
            p.setBrush(Qt::white);
            p.setPen(Qt::NoPen);
            p.drawPolygon(QPolygonF({QPointF(6.5, 5), QPointF(11.5, 8), QPointF(6.5, 11)}));
        } else if (state == RunState::Queued || state == RunState::Held) {
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(c, 2));
            p.drawEllipse(QRectF(3, 3, 10, 10));
        } else {
            p.setBrush(c);
            p.drawEllipse(QRectF(2.5, 2.5, 11, 11));
        }
    }
    QIcon icon(pm);
    cache.insert(key, icon);
    return icon;
}

int RunStateStyle::sortOrder(RunState state)
{
    switch (state) {
    case RunState::Running: return 0;
    case RunState::Starting: return 1;
    case RunState::Unknown: return 2;
    case RunState::Queued: return 3;
    case RunState::Held: return 3;
    case RunState::Failed: return 4;
    case RunState::Cancelled: return 5;
    case RunState::Succeeded: return 6;
    }
    return 7;
}

} // namespace ty
