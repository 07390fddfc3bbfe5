#include "RunGroup.h"

#include "EnumNames.h"

#include <array>

namespace ty {
namespace {
constexpr std::array<EnumName<RunGroupKind>, 4> kKindNames{{
        {RunGroupKind::Sweep, u"sweep"},
        {RunGroupKind::Gang, u"gang"},
        {RunGroupKind::Pipeline, u"pipeline"},
        {RunGroupKind::Attempts, u"attempts"},
}};
} // namespace

QString runGroupKindName(RunGroupKind kind)
{
    return enumName(kKindNames, kind);
}

QString membershipText(const RunGroupMembership& m)
{
    const QString head = QStringLiteral("%1 %2").arg(runGroupKindName(m.kind)).arg(m.group);
    switch (m.kind) {
    case RunGroupKind::Sweep:
        return m.role.isEmpty() ? QStringLiteral("%1: combination %2").arg(head).arg(m.position + 1)
                                : QStringLiteral("%1: %2").arg(head, m.role);
    case RunGroupKind::Gang: return QStringLiteral("%1: rank %2").arg(head).arg(m.position);
    case RunGroupKind::Pipeline: return QStringLiteral("%1: step %2").arg(head, m.role);
    case RunGroupKind::Attempts: return QStringLiteral("%1: attempt %2").arg(head).arg(m.position);
    }
    return head;
}

std::optional<RunGroupKind> runGroupKindFromName(QStringView name)
{
    return enumFromName(kKindNames, name);
}

} // namespace ty
