#pragma once

#include <QString>

namespace ty {

// POSIX shell quoting (sh -c, an SSH exec request): a plain word (letters,
// digits and _ . , : / + @ % = -) stays as it is; anything else, the empty
// string included, goes in single quotes, a ' inside becoming '\''.
// Thread-safe.
QString shellQuote(const QString& value);

} // namespace ty
