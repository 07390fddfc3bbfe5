#include "NodeRecord.h"

#include "core/common/EnumNames.h"

#include <array>

namespace ty {
namespace {
constexpr std::array<EnumName<NodeKind>, 2> kKindNames{{
        {NodeKind::Ssh, u"ssh"},
        {NodeKind::Slurm, u"slurm"},
}};
} // namespace

QString nodeKindName(NodeKind kind)
{
    return enumName(kKindNames, kind);
}

std::optional<NodeKind> nodeKindFromName(QStringView name)
{
    return enumFromName(kKindNames, name);
}

std::optional<QString> nodeLabelError(QStringView label)
{
    constexpr qsizetype kMax = 63;
    if (label.isEmpty())
        return QStringLiteral("a label cannot be empty");
    // Shown as typed, but never raw: anything but printable ASCII as \uXXXX.
    const auto shown = [](QChar c) {
        return c.unicode() >= 0x20 && c.unicode() < 0x7f
                ? QString(c)
                : QStringLiteral("\\u%1").arg(int(c.unicode()), 4, 16, QLatin1Char('0'));
    };
    QString text;
    for (qsizetype i = 0; i < label.size() && i < kMax; ++i)
        text += shown(label[i]);
    if (label.size() > kMax)
        return QStringLiteral("label '%1...' is longer than %2 characters").arg(text).arg(kMax);
    for (qsizetype i = 0; i < label.size(); ++i) {
        const char16_t u = label[i].unicode();
        const bool alnum = (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9');
        if (!alnum && (i == 0 || (u != u'.' && u != u'_' && u != u'-')))
            return QStringLiteral("label '%1' has '%2' at position %3: labels are letters, digits, '.', '_' and '-',"
                                  " starting with a letter or digit")
                    .arg(text, shown(label[i]))
                    .arg(i + 1);
    }
    return std::nullopt;
}

} // namespace ty
