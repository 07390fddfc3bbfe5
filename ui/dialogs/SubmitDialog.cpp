#include "SubmitDialog.h"
#include "ui/settings/DialogGeometry.h"

#include "CommandLine.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

namespace ty {

namespace {

const QString kDialogOrigin = QStringLiteral("<submit dialog>");

Result<QMap<QString, QString>> parseAssignments(const QString& text, const QString& what)
{
    QMap<QString, QString> out;
    const QStringList lines = text.split(u'\n');
    for (int i = 0; i < lines.size(); ++i) {
        const QString line = lines.at(i).trimmed();
        if (line.isEmpty() || line.startsWith(u'#'))
            continue;
        const qsizetype eq = line.indexOf(u'=');
        if (eq <= 0)
            return fail(QStringLiteral("%1, line %2: expected NAME=value, got '%3'").arg(what).arg(i + 1).arg(line));
        out.insert(line.left(eq).trimmed(), line.mid(eq + 1).trimmed());
    }
    return out;
}

QString assignments(const QMap<QString, QString>& map, bool skipParamEnv)
{
    QStringList lines;
    for (auto it = map.cbegin(); it != map.cend(); ++it)
        if (!skipParamEnv || !it.key().startsWith(QStringLiteral("TRAINYARD_PARAM_")))
            lines << it.key() + u'=' + it.value();
    return lines.join(u'\n');
}

QPlainTextEdit* smallTextEdit(QWidget* parent, const QString& name, const QString& placeholder)
{
    auto* e = new QPlainTextEdit(parent);
    e->setObjectName(name);
    e->setPlaceholderText(placeholder);
    e->setTabChangesFocus(true);
    e->setFixedHeight(e->fontMetrics().lineSpacing() * 4 + 12);
    return e;
}

} // namespace

SubmitDialog::SubmitDialog(QWidget* parent)
    : QDialog(parent)
    , m_origin(kDialogOrigin)
    , m_baseDir(QDir::homePath())
{
    setObjectName(QStringLiteral("submitDialog"));
    rememberGeometry(this, QStringLiteral("submit"));
    setWindowTitle(tr("Submit run"));
    resize(640, 520);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("modeTabs"));
    m_tabs->setAccessibleName(tr("Form or YAML"));

    auto* form = new QWidget;
    auto* fl = new QFormLayout(form);
    m_name = new QLineEdit(form);
    m_name->setObjectName(QStringLiteral("nameEdit"));
    m_command = new QLineEdit(form);
    m_command->setObjectName(QStringLiteral("commandEdit"));
    m_command->setPlaceholderText(tr("python3 train.py --lr 0.001"));
    m_command->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_commandMode = new QComboBox(form);
    m_commandMode->setObjectName(QStringLiteral("commandModeCombo"));
    m_commandMode->setAccessibleName(tr("Command kind"));
    m_commandMode->addItem(tr("Argument list"));
    m_commandMode->addItem(tr("Shell command"));
    m_commandMode->setToolTip(tr("Argument list: run exactly these words, quoted like a shell, no expansion.\n"
                                 "Shell command: run the line with /bin/sh -c (pipes, $VARS, ;)."));
    auto* commandRow = new QHBoxLayout;
    commandRow->addWidget(m_command, 1);
    commandRow->addWidget(m_commandMode);
    m_workdir = new QLineEdit(form);
    m_workdir->setObjectName(QStringLiteral("workdirEdit"));
    auto* browse = new QToolButton(form);
    browse->setObjectName(QStringLiteral("workdirBrowseButton"));
    browse->setText(tr("Browse…"));
    auto* workdirRow = new QHBoxLayout;
    workdirRow->addWidget(m_workdir, 1);
    workdirRow->addWidget(browse);
    m_env = smallTextEdit(form, QStringLiteral("envEdit"), tr("NAME=value, one per line"));
    m_params = smallTextEdit(
            form, QStringLiteral("paramsEdit"), tr("lr=0.001, one per line; {{lr}} in the command is replaced"));
    m_gpus = new QSpinBox(form);
    m_gpus->setObjectName(QStringLiteral("gpusSpin"));
    m_gpus->setRange(0, 64);
    m_priority = new QSpinBox(form);
    m_priority->setObjectName(QStringLiteral("prioritySpin"));
    m_priority->setRange(-1000, 1000);
    m_tags = new QLineEdit(form);
    m_tags->setObjectName(QStringLiteral("tagsEdit"));
    m_tags->setPlaceholderText(tr("baseline, digits"));
    // A row whose field is a layout gets no buddy from addRow(text, layout),
    // and its label would show the '&' itself: give those their own.
    const auto label = [form](const QString& text, QWidget* buddy) {
        auto* l = new QLabel(text, form);
        l->setBuddy(buddy);
        return l;
    };
    fl->addRow(tr("&Name:"), m_name);
    fl->addRow(label(tr("&Command:"), m_command), commandRow);
    fl->addRow(label(tr("&Working directory:"), m_workdir), workdirRow);
    fl->addRow(tr("&Environment:"), m_env);
    fl->addRow(tr("&Params:"), m_params);
    fl->addRow(tr("&GPUs:"), m_gpus);
    fl->addRow(tr("P&riority:"), m_priority);
    fl->addRow(tr("&Tags:"), m_tags);
    m_tabs->addTab(form, tr("Form"));

    m_yaml = new QPlainTextEdit;
    m_yaml->setObjectName(QStringLiteral("yamlEdit"));
    m_yaml->setAccessibleName(tr("Job spec YAML"));
    m_yaml->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_yaml->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_yaml->setPlainText(specTemplate());
    m_tabs->addTab(m_yaml, tr("YAML spec"));

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("errorLabel"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
    // Room for a two-line error whether one is shown or not: the rows above
    // and the buttons below stay where they are when it comes or goes.
    m_error->setMinimumHeight(m_error->fontMetrics().lineSpacing() * 2 + 4);
    m_error->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    QSizePolicy keepSize = m_error->sizePolicy();
    keepSize.setRetainSizeWhenHidden(true);
    m_error->setSizePolicy(keepSize);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->setObjectName(QStringLiteral("buttonBox"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Submit"));

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &SubmitDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &SubmitDialog::reject);
    connect(browse, &QToolButton::clicked, this, &SubmitDialog::browseWorkdir);
    connect(m_tabs, &QTabWidget::currentChanged, this, &SubmitDialog::onModeChanged);
    // Nothing is an error before the user has typed: the first validate()
    // only decides whether Submit is enabled.
    auto revalidate = [this] {
        if (m_filling)
            return;
        m_touched = true;
        validate();
    };
    for (QLineEdit* e : {m_name, m_command, m_workdir, m_tags})
        connect(e, &QLineEdit::textChanged, this, revalidate);
    for (QPlainTextEdit* e : {m_env, m_params, m_yaml})
        connect(e, &QPlainTextEdit::textChanged, this, revalidate);
    connect(m_commandMode, &QComboBox::currentIndexChanged, this, revalidate);
    connect(m_gpus, &QSpinBox::valueChanged, this, revalidate);
    connect(m_priority, &QSpinBox::valueChanged, this, revalidate);
    validate();
}

SubmitDialog::Mode SubmitDialog::mode() const
{
    return m_tabs->currentIndex() == 1 ? Mode::Yaml : Mode::Form;
}

void SubmitDialog::setMode(Mode mode)
{
    m_tabs->setCurrentIndex(mode == Mode::Yaml ? 1 : 0);
}

QString SubmitDialog::errorText() const
{
    return m_error->text();
}

void SubmitDialog::fillForm(const JobSpec& spec)
{
    m_filling = true;
    m_name->setText(spec.name);
    if (spec.shellCommand && spec.argv.size() == 3) {
        m_commandMode->setCurrentIndex(1);
        m_command->setText(spec.argv.at(2));
    } else {
        m_commandMode->setCurrentIndex(0);
        m_command->setText(CommandLine::join(spec.argv));
    }
    m_workdir->setText(spec.workdir);
    m_env->setPlainText(assignments(spec.env, true));
    m_params->setPlainText(assignments(spec.params, false));
    m_gpus->setValue(spec.resources.gpus);
    m_priority->setValue(spec.priority);
    m_tags->setText(spec.tags.join(QStringLiteral(", ")));
    m_filling = false;
}

void SubmitDialog::setSpec(const JobSpec& spec)
{
    m_base = spec;
    m_origin = kDialogOrigin;
    if (!spec.sourcePath.isEmpty())
        m_baseDir = QFileInfo(spec.sourcePath).absolutePath();
    else if (!spec.workdir.isEmpty())
        m_baseDir = spec.workdir;
    fillForm(spec);
    m_filling = true;
    m_tabs->setCurrentIndex(0);
    m_lastTab = 0;
    m_yaml->setPlainText(toYaml(spec));
    m_filling = false;
    m_touched = true; // filled in for the user: what is wrong in it is shown
    validate();
}

void SubmitDialog::setSpecText(const QString& yaml, const QString& origin, const QString& baseDir)
{
    m_origin = origin.isEmpty() ? kDialogOrigin : origin;
    m_baseDir = baseDir.isEmpty() ? QDir::homePath() : baseDir;
    m_filling = true;
    m_tabs->setCurrentIndex(1);
    m_lastTab = 1;
    m_yaml->setPlainText(yaml);
    m_filling = false;
    if (auto spec = specFromYaml()) {
        m_base = *spec;
        fillForm(*spec);
    }
    m_touched = true; // a dropped file's errors are shown at once
    validate();
}

Result<JobSpec> SubmitDialog::specFromYaml() const
{
    auto spec = parseJobSpec(m_yaml->toPlainText(), m_origin, m_baseDir);
    if (spec && m_origin != kDialogOrigin)
        spec->sourcePath = m_origin;
    return spec;
}

Result<JobSpec> SubmitDialog::specFromForm() const
{
    JobSpec s = m_base;
    s.name = m_name->text().trimmed();
    const QString command = m_command->text().trimmed();
    if (command.isEmpty())
        return fail(tr("Command: enter the command to run, e.g. python3 train.py"));
    if (m_commandMode->currentIndex() == 1) {
        s.argv = {QStringLiteral("/bin/sh"), QStringLiteral("-c"), command};
        s.shellCommand = true;
    } else {
        auto argv = CommandLine::split(command);
        if (!argv)
            return fail(tr("Command: %1").arg(argv.error().message));
        s.argv = *argv;
        s.shellCommand = false;
    }
    s.workdir = m_workdir->text().trimmed();
    auto env = parseAssignments(m_env->toPlainText(), tr("Environment"));
    if (!env)
        return std::unexpected(env.error());
    s.env = *env;
    auto params = parseAssignments(m_params->toPlainText(), tr("Params"));
    if (!params)
        return std::unexpected(params.error());
    s.params = *params;
    s.resources.gpus = m_gpus->value();
    s.priority = m_priority->value();
    s.tags.clear();
    const QStringList tags = m_tags->text().split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts);
    for (const QString& t : tags)
        s.tags << t;
    // The form's fields go through the same parser as a spec file, so both
    // paths validate identically.
    auto spec = parseJobSpec(toYaml(s), kDialogOrigin, m_baseDir);
    if (spec)
        spec->sourcePath = m_base.sourcePath;
    return spec;
}

Result<JobSpec> SubmitDialog::validate()
{
    auto spec = mode() == Mode::Yaml ? specFromYaml() : specFromForm();
    showError(spec ? QString() : spec.error().message);
    return spec;
}

QString SubmitDialog::specTemplate()
{
    return tr("# A Trainyard job spec (README, \"Job spec\", has every key). Lines starting with # are comments.\n"
              "name: my-run\n"
              "command: [python3, train.py, --lr, \"{{lr}}\"]   # a list runs as is; a string runs through /bin/sh -c\n"
              "workdir: .                # relative to the spec file (here: your home folder)\n"
              "params: {lr: 0.001}       # {{lr}} above; also exported as TRAINYARD_PARAM_LR\n"
              "# env: {PYTHONUNBUFFERED: \"1\"}\n"
              "# resources: {gpus: 1, gpu_memory: 40GiB, cpus: 8, memory: 64G}\n"
              "# tags: [baseline]\n"
              "# sweep: {lr: [0.001, 0.01, 0.1]}   # one run per value\n"
              "# time_limit: 4h\n"
              "# metric_files: [lightning_logs/*/metrics.csv]\n");
}

void SubmitDialog::showError(const QString& message)
{
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(message.isEmpty());
    // Untouched: Submit waits for a valid spec, but nothing is called wrong
    // yet (an empty form is not a mistake).
    const QString shown = m_touched ? message : QString();
    m_error->setText(shown);
    m_error->setVisible(!shown.isEmpty());

    // Mark the offending line of the YAML text.
    QList<QTextEdit::ExtraSelection> marks;
    if (!shown.isEmpty() && mode() == Mode::Yaml && message.startsWith(m_origin)) {
        static const QRegularExpression where(QStringLiteral("^:(\\d+):(\\d+):"));
        const auto m = where.match(QStringView(message).mid(m_origin.size()));
        if (m.hasMatch()) {
            const int line = m.captured(1).toInt();
            const QTextBlock block = m_yaml->document()->findBlockByNumber(line - 1);
            if (block.isValid()) {
                QTextEdit::ExtraSelection sel;
                sel.cursor = QTextCursor(block);
                sel.format.setBackground(QColor(0xff, 0xcd, 0xd2));
                sel.format.setProperty(QTextFormat::FullWidthSelection, true);
                marks.append(sel);
            }
        }
    }
    m_yaml->setExtraSelections(marks);
}

void SubmitDialog::onModeChanged(int index)
{
    if (m_filling || index == m_lastTab)
        return;
    if (index == 1) {
        // Form -> YAML: carry the form over when it is valid.
        if (auto spec = specFromForm()) {
            m_filling = true;
            m_yaml->setPlainText(toYaml(*spec));
            m_filling = false;
        }
    } else if (auto spec = specFromYaml()) {
        m_base = *spec;
        fillForm(*spec);
    }
    m_lastTab = index;
    validate();
}

void SubmitDialog::browseWorkdir()
{
    const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Working directory"), m_workdir->text().isEmpty() ? m_baseDir : m_workdir->text());
    if (!dir.isEmpty())
        m_workdir->setText(dir);
}

void SubmitDialog::accept()
{
    m_touched = true;
    auto spec = validate();
    if (!spec)
        return;
    m_result = *spec;
    QDialog::accept();
}

} // namespace ty
