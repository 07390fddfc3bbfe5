#pragma once

#include <QString>
#include <QStringList>
#include <QStringView>

namespace ty {

// The candidate nearest to a mistyped `word` by Levenshtein distance (one
// insertion, deletion or substitution each), when it is at most
// `maxDistance` away; empty otherwise. The first of equally near ones wins.
// For "did you mean ...?" in spec errors. Pure.
QString closestName(QStringView word, const QStringList& candidates, int maxDistance = 2);

} // namespace ty
