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

} // namespace ty
