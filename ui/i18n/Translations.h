// Loading the GUI's translations for a locale (issue #28).
//
// Trainyard's own strings come from the trainyard_<locale>.qm files embedded
// under :/i18n (built by qt_add_translations from translations/*.ts); Qt's own
// strings (standard buttons, file dialogs) from qtbase_<locale>.qm in
// QLibraryInfo::TranslationsPath. The CLI and the service are not translated.
//
// Thread affinity: GUI thread, after the QCoreApplication exists.
// Errors: a locale with no translation leaves the English source strings; that
// is not an error, so nothing is reported beyond the return value.
#pragma once

#include <QLocale>

class QCoreApplication;

namespace ty {

struct InstalledTranslations {
    bool trainyard = false; // trainyard_<locale>.qm found and installed
    bool qt = false;        // qtbase_<locale>.qm found and installed
};

// Installs translators for `locale` (default: QLocale(), i.e. QLocale::system()
// unless QLocale::setDefault was called) on `app`, replacing any this function
// installed before. The translators are children of `app`.
InstalledTranslations installTranslations(QCoreApplication* app, const QLocale& locale = QLocale());

} // namespace ty
