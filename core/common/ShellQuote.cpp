#include "ShellQuote.h"

#include <QRegularExpression>

namespace ty {

QString shellQuote(const QString& value)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_.,:/+@%=-]+$"));
    if (plain.match(value).hasMatch())
        return value;
    QString quoted = value;
    quoted.replace(u'\'', QStringLiteral("'\\''"));
    return u'\'' + quoted + u'\'';
}

} // namespace ty
