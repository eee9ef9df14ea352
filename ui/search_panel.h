#pragma once
// Search configuration and control: generator, rounds, ideas per round, implementations per idea,
// top-k, bank, tolerance policy, trials, timing runs, time budget, repairs and the worker command;
// Start and Cancel, and a progress bar with an ETA.
#include "engine.h"
#include "search/settings.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace kf::ui {

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(QWidget *parent = nullptr);

    SearchSettings settings() const;
    void setSettings(const SearchSettings &);
    QString generator() const;
    void setGenerator(const QString &);
    QString workerCommand() const;
    void setWorkerCommand(const QString &);

    // Why Start is unavailable ("" when it is available).
    void setStartBlocked(const QString &reason);
    void setRunning(bool);
    void showProgress(const SearchProgress &);
    void showFinished(const QString &reason, bool failed);
    QPushButton *startButton() const { return m_start; }
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *progressBar() const { return m_progress; }

signals:
    void startRequested();
    void cancelRequested();
    void workerCommandChanged(const QString &);

private:
    QComboBox *m_generator, *m_policy;
    QSpinBox *m_rounds, *m_ideas, *m_impls, *m_topK, *m_bank, *m_trials, *m_timingTrials, *m_repairs;
    QDoubleSpinBox *m_budget;
    QLineEdit *m_worker;
    QPushButton *m_start, *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_status;
    QString m_blocked;
    bool m_running = false;
};

} // namespace kf::ui
