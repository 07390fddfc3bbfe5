#include "RunEndNotifier.h"

#include "ui/i18n/RunTexts.h"
#include "ui/settings/GuiSettings.h"

#include <QApplication>
#include <QStyle>
#include <QSystemTrayIcon>
#include <QTimer>
#include <QWidget>

namespace ty {

namespace {
constexpr int kMessageMs = 10000;
} // namespace

RunEndNotifier::RunEndNotifier(QWidget* window)
    : QObject(window)
    , m_window(window)
{
    m_hideTray = new QTimer(this);
    m_hideTray->setSingleShot(true);
    m_hideTray->setInterval(kMessageMs + 2000);
    connect(m_hideTray, &QTimer::timeout, this, [this] {
        if (m_tray)
            m_tray->hide();
    });
}

void RunEndNotifier::observe(const RunRecord& run)
{
    const auto seen = m_states.constFind(run.id);
    const bool ended = seen != m_states.cend() && !isTerminal(*seen) && isTerminal(run.state);
    m_states.insert(run.id, run.state);
    if (ended && notifyRunEndSetting())
        notify(run);
}

QString RunEndNotifier::titleFor(const RunRecord& run)
{
    return tr("%1 #%2 %3").arg(run.name).arg(run.id).arg(runStateCellText(run.state, run.failureKind));
}

QString RunEndNotifier::textFor(const RunRecord& run)
{
    if (!run.failureReason.isEmpty())
        return run.failureReason;
    if (run.exitCode)
        return tr("Exit status %1 on %2").arg(*run.exitCode).arg(run.node);
    return tr("On %1").arg(run.node);
}

void RunEndNotifier::notify(const RunRecord& run)
{
    const QString title = titleFor(run);
    const QString text = textFor(run);
    const bool tray = QSystemTrayIcon::isSystemTrayAvailable();
    if (tray) {
        if (!m_tray) {
            QIcon icon = m_window->windowIcon();
            if (icon.isNull())
                icon = QApplication::windowIcon();
            if (icon.isNull())
                icon = m_window->style()->standardIcon(QStyle::SP_ComputerIcon);
            m_tray = new QSystemTrayIcon(icon, this);
            m_tray->setToolTip(QStringLiteral("Trainyard"));
            connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
                m_window->show();
                m_window->raise();
                m_window->activateWindow();
            });
        }
        m_tray->show();
        m_tray->showMessage(title, text,
                run.state == RunState::Succeeded ? QSystemTrayIcon::Information : QSystemTrayIcon::Warning, kMessageMs);
        m_hideTray->start();
    } else {
        QApplication::alert(m_window);
    }
    Q_EMIT notified(run.id, title, text, tray);
}

} // namespace ty
