#include "AttemptsStrip.h"

#include "RunStateStyle.h"
#include "RunsModel.h"
#include "core/common/RunDuration.h"
#include "ui/i18n/RunTexts.h"

namespace ty {

AttemptsStrip::AttemptsStrip(QWidget* parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("runAttempts"));
    setTextFormat(Qt::RichText);
    setContentsMargins(6, 0, 6, 2);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    setVisible(false);
    connect(this, &QLabel::linkActivated, this, [this](const QString& link) {
        bool ok = false;
        const RunId run = link.toLongLong(&ok);
        if (ok)
            Q_EMIT attemptActivated(run);
    });
}

void AttemptsStrip::setAttempts(const QList<RunRecord>& attempts, RunId current, const QDateTime& nowUtc)
{
    if (attempts.size() < 2) {
        m_plain.clear();
        setText({});
        setAccessibleName({});
        setVisible(false);
        return;
    }
    int currentAttempt = 0;
    QStringList rich;
    QStringList plain;
    for (qsizetype i = 0; i < attempts.size(); ++i) {
        const RunRecord& r = attempts[i];
        const auto m = membershipOf(r, RunGroupKind::Attempts);
        const int number = m ? m->position : int(i) + 1;
        if (r.id == current)
            currentAttempt = number;
        QString what = runStateCellText(r.state, r.failureKind);
        if (!r.node.isEmpty())
            what += tr(" on %1").arg(r.node);
        const RunDuration d = runDuration(r, nowUtc);
        if (r.startedAt.isValid() && d.ms >= 0)
            what += QStringLiteral(", ") + RunsModel::formatDuration(d.ms);
        else if (r.state == RunState::Queued && r.notBefore.isValid() && r.notBefore > nowUtc)
            what += tr(", not before %1").arg(r.notBefore.toLocalTime().toString(QStringLiteral("HH:mm:ss")));
        plain << QStringLiteral("%1 %2").arg(number).arg(what);
        const QString numberText = r.id == current ? QStringLiteral("<b>%1</b>").arg(number)
                                                   : QStringLiteral("<a href='%1'>%2</a>").arg(r.id).arg(number);
        rich << QStringLiteral("%1 <span style='color:%2'>%3</span>")
                        .arg(numberText, RunStateStyle::color(r.state).name(), what.toHtmlEscaped());
    }
    const QString head = tr("Attempt %1 of %2:").arg(currentAttempt).arg(attempts.size());
    m_plain = head + QStringLiteral("  ") + plain.join(QStringLiteral("  ·  "));
    setText(head + QStringLiteral(" &nbsp;") + rich.join(QStringLiteral(" &nbsp;·&nbsp; ")));
    setToolTip(m_plain);
    setAccessibleName(m_plain);
    setVisible(true);
}

} // namespace ty
