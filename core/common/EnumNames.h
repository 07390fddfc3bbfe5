#pragma once

// A table of an enum's names as stored (database, JSON, specs) and, where
// it has them, its short labels for people, with the lookups every such
// table needs: RunState, FailureKind, RunGroupKind, RetryClass. Constant
// tables; any thread.

#include <QString>
#include <QStringView>

#include <array>
#include <optional>

namespace ty {

template <class E> struct EnumName {
    E value;
    const char16_t* name;
    const char16_t* label = u""; // what people read, where it differs from `name`
};

// The row of `value`, nullptr when the table lacks it.
template <class E, std::size_t N> const EnumName<E>* enumRow(const std::array<EnumName<E>, N>& table, E value)
{
    for (const EnumName<E>& row : table)
        if (row.value == value)
            return &row;
    return nullptr;
}

// `value`'s name, `fallback` when the table lacks it.
template <class E, std::size_t N>
QString enumName(const std::array<EnumName<E>, N>& table, E value, const QString& fallback = {})
{
    const EnumName<E>* row = enumRow(table, value);
    return row ? QString::fromUtf16(row->name) : fallback;
}

// `value`'s label, empty when the table lacks it.
template <class E, std::size_t N> QString enumLabel(const std::array<EnumName<E>, N>& table, E value)
{
    const EnumName<E>* row = enumRow(table, value);
    return row ? QString::fromUtf16(row->label) : QString();
}

// The value named exactly `name`; nullopt for any other text.
template <class E, std::size_t N>
std::optional<E> enumFromName(const std::array<EnumName<E>, N>& table, QStringView name)
{
    for (const EnumName<E>& row : table)
        if (name == QStringView(row.name))
            return row.value;
    return std::nullopt;
}

} // namespace ty
