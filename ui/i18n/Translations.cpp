#include "ui/i18n/Translations.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QPointer>
#include <QTranslator>

namespace ty {

namespace {
QPointer<QTranslator> g_trainyard;
QPointer<QTranslator> g_qt;

void drop(QPointer<QTranslator>& t)
{
    if (t) {
        QCoreApplication::removeTranslator(t);
        delete t.data();
    }
}
} // namespace

InstalledTranslations installTranslations(QCoreApplication* app, const QLocale& locale)
{
    drop(g_trainyard);
    drop(g_qt);
    InstalledTranslations out;
    auto* own = new QTranslator(app);
    if (own->load(locale, QStringLiteral("trainyard"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
        QCoreApplication::installTranslator(own);
        g_trainyard = own;
        out.trainyard = true;
    } else {
        delete own;
    }
    auto* qt = new QTranslator(app);
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qt);
        g_qt = qt;
        out.qt = true;
    } else {
        delete qt;
    }
    return out;
}

} // namespace ty
