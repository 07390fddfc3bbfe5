#pragma once

#include "core/common/Result.h"
#include "core/spec/JobSpec.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QTabWidget;

namespace ty {

// Submit a run: either a form (name, command, workdir, env, params, GPUs,
// priority, tags) or the job spec's YAML text. Whatever is entered is
// validated through parseJobSpec on every edit; the error (with line:column
// for YAML) is shown and Submit stays disabled until it parses. The result
// is a validated JobSpec (spec()).
//
// objectNames for tests: "submitDialog", "modeTabs", "nameEdit",
// "commandEdit", "commandModeCombo" (0 = argument list, 1 = shell command),
// "workdirEdit", "envEdit", "paramsEdit", "gpusSpin", "prioritySpin",
// "tagsEdit", "yamlEdit", "errorLabel", "buttonBox".
// GUI thread only.
class SubmitDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SubmitDialog)

public:
    enum class Mode { Form, Yaml };

    explicit SubmitDialog(QWidget* parent = nullptr);

    // Form mode, filled from `spec` (fields the form has no widget for, such
    // as metric rules, are kept).
    void setSpec(const JobSpec& spec);
    // YAML mode with `yaml` as text; `origin` names it in errors (a path, or
    // "<submit dialog>"); relative workdirs resolve against `baseDir`.
    void setSpecText(const QString& yaml, const QString& origin, const QString& baseDir);

    Mode mode() const;
    void setMode(Mode mode);
    // Validates what is entered now, updating the error label and button.
    Result<JobSpec> validate();
    // The validated spec once accepted.
    JobSpec spec() const { return m_result; }
    QString errorText() const;

    void accept() override;

    // The YAML tab's text before anything is entered: a commented example
    // spec (valid as it is, naming the common keys).
    static QString specTemplate();

private:
    Result<JobSpec> specFromForm() const;
    Result<JobSpec> specFromYaml() const;
    void fillForm(const JobSpec& spec);
    void onModeChanged(int index);
    void showError(const QString& message);
    void browseWorkdir();

    QTabWidget* m_tabs = nullptr;
    QLineEdit* m_name = nullptr;
    QLineEdit* m_command = nullptr;
    QComboBox* m_commandMode = nullptr;
    QLineEdit* m_workdir = nullptr;
    QPlainTextEdit* m_env = nullptr;
    QPlainTextEdit* m_params = nullptr;
    QSpinBox* m_gpus = nullptr;
    QSpinBox* m_priority = nullptr;
    QLineEdit* m_tags = nullptr;
    QPlainTextEdit* m_yaml = nullptr;
    QLabel* m_error = nullptr;
    QDialogButtonBox* m_buttons = nullptr;

    JobSpec m_base; // the spec the form started from
    JobSpec m_result;
    QString m_origin;
    QString m_baseDir;
    bool m_filling = false;
    bool m_touched = false; // the user typed or tried to submit: errors are shown
    int m_lastTab = 0;
};

} // namespace ty
