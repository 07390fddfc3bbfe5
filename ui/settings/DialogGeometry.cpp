#include "DialogGeometry.h"

#include "GuiSettings.h"

#include <QEvent>
#include <QWidget>

namespace ty {

namespace {

class GeometryKeeper final : public QObject {
public:
    GeometryKeeper(QWidget* window, QString key)
        : QObject(window)
        , m_window(window)
        , m_key(std::move(key))
    {
        window->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched != m_window)
            return false;
        switch (event->type()) {
        case QEvent::Show:
            // Sent before the window is mapped: it appears where it was.
            if (!m_restored) {
                m_restored = true;
                const QByteArray saved = guiSettings().value(m_key).toByteArray();
                if (!saved.isEmpty())
                    m_window->restoreGeometry(saved);
            }
            break;
        case QEvent::Hide:
        case QEvent::Close:
            if (m_restored) // never overwrite with the geometry of a dialog never shown
                guiSettings().setValue(m_key, m_window->saveGeometry());
            break;
        default: break;
        }
        return false;
    }

private:
    QWidget* m_window;
    QString m_key;
    bool m_restored = false;
};

} // namespace

QString geometrySettingsKey(const QString& key)
{
    return QStringLiteral("dialogs/%1/geometry").arg(key);
}

void rememberGeometry(QWidget* window, const QString& key)
{
    new GeometryKeeper(window, geometrySettingsKey(key));
}

} // namespace ty
