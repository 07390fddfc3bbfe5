#include "GuiCommandLine.h"

#include <QCommandLineParser>

namespace ty {

GuiCommandLine GuiCommandLine::parse(
        const QStringList& args, const QString& version, const QString& defaultDatabasePath)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Trainyard: run, watch and compare training jobs."));
    // Not addHelpOption()/addVersionOption(): those print through the
    // application object, which does not exist yet.
    const QCommandLineOption help(
            {QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Displays help on commandline options."));
    const QCommandLineOption versionOption(
            {QStringLiteral("v"), QStringLiteral("version")}, QStringLiteral("Displays version information."));
    const QCommandLineOption db(QStringLiteral("db"),
            QStringLiteral("Result database (default: $TRAINYARD_DB, else %1).").arg(defaultDatabasePath),
            QStringLiteral("PATH"));
    const QCommandLineOption submit(
            QStringLiteral("submit"), QStringLiteral("Submit this job spec at start."), QStringLiteral("FILE"));
    parser.addOption(help);
    parser.addOption(versionOption);
    parser.addOption(db);
    parser.addOption(submit);
    parser.addPositionalArgument(QStringLiteral("FILE"),
            QStringLiteral("Job specs, scripts or folders to open, as if dropped on the window."),
            QStringLiteral("[FILE...]"));
    GuiCommandLine out;
    if (!parser.parse(args)) {
        out.action = Action::Fail;
        out.text = QStringLiteral("trainyard: %1\nTry 'trainyard --help'.\n").arg(parser.errorText());
        return out;
    }
    if (parser.isSet(help)) {
        out.action = Action::PrintAndExit;
        // helpText() names the program from the application object; say it here.
        QString text = parser.helpText();
        const qsizetype firstLine = text.indexOf(u'\n');
        out.text = QStringLiteral("Usage: trainyard [options] [FILE...]") + text.mid(firstLine);
        return out;
    }
    if (parser.isSet(versionOption)) {
        out.action = Action::PrintAndExit;
        out.text = QStringLiteral("trainyard %1\n").arg(version);
        return out;
    }
    out.databasePath = parser.value(db);
    out.submitFile = parser.value(submit);
    out.files = parser.positionalArguments();
    return out;
}

} // namespace ty
