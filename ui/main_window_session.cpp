// The main window's care for what is not saved yet: the editor's unsaved edits are written to .cu
// files or dropped only when the user says so (closing the session or the window, opening or
// creating another), and Save As keeps them. Also the Help menu's dialogs and pages.
#include "main_window.h"

#include "candidate_pane.h"
#include "message_bar.h"
#include "model/format.h"
#include "search_panel.h"
#include "settings.h"

#include <QCloseEvent>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace kf::ui {

namespace {

QString nodeList(const QList<qint64> &nodes)
{
    QStringList ids;
    for (qint64 n : nodes)
        ids << QStringLiteral("#%1").arg(n);
    return ids.join(QStringLiteral(", "));
}

} // namespace

bool MainWindow::saveSource(std::int64_t node, const QString &file)
{
    // An edit is the editor's, whatever the session's snapshot holds at this moment (after Save As
    // the window may still be between two snapshots of the copy).
    QString text;
    if (m_candidate->draftNodes().contains(node)) {
        text = m_candidate->draftText(node);
    } else {
        const NodeView *n = m_session ? m_session->node(node) : nullptr;
        if (!n || !n->isCandidate()) {
            showError(tr("Save source"),
                      tr("#%1 is not a candidate of the open session; nothing was written").arg(node));
            return false;
        }
        text = qs(n->record.text);
    }
    QSaveFile f(file);
    const QByteArray bytes = text.toUtf8();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
        showError(tr("Save source"), tr("cannot write %1: %2").arg(file, f.errorString()));
        return false;
    }
    log(tr("Saved the source of #%1 as %2").arg(node).arg(file));
    return true;
}

QString MainWindow::suggestedSourceName(std::int64_t node) const
{
    const QString problem = m_session ? qs(m_session->meta.problemName) : QStringLiteral("kernel");
    return m_candidate->draftNodes().contains(node) ? QStringLiteral("%1_node%2_edited.cu").arg(problem).arg(node)
                                                    : QStringLiteral("%1_node%2.cu").arg(problem).arg(node);
}

void MainWindow::onSaveSource()
{
    const NodeView *n = m_session ? m_session->node(m_selected) : nullptr;
    if (n && n->isCandidate())
        saveSourcesAsked({qint64(n->id())});
}

bool MainWindow::saveSourcesAsked(const QList<qint64> &nodes)
{
    if (nodes.size() == 1) {
        const QString file = askSaveFile(tr("Save the source of #%1 as").arg(nodes.first()), tr("CUDA sources (*.cu)"),
                                         suggestedSourceName(nodes.first()));
        if (file.isEmpty())
            return false;
        if (!saveSource(nodes.first(), file))
            return false;
        showInfo(tr("Saved the source of #%1 as %2").arg(nodes.first()).arg(file));
        return true;
    }
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("A folder for the edited sources of %1").arg(nodeList(nodes)), m_settings->lastFolder());
    if (folder.isEmpty())
        return false;
    m_settings->setLastFolder(folder);
    // Each in a file of its own; a file that is there already is never overwritten.
    QStringList existing;
    for (qint64 node : nodes)
        if (QFileInfo::exists(QDir(folder).filePath(suggestedSourceName(node))))
            existing << suggestedSourceName(node);
    if (!existing.isEmpty()) {
        showError(tr("Save sources"),
                  tr("%1 already holds %2; nothing was written").arg(folder, existing.join(QStringLiteral(", "))));
        return false;
    }
    for (qint64 node : nodes)
        if (!saveSource(node, QDir(folder).filePath(suggestedSourceName(node))))
            return false;
    showInfo(tr("Saved the edited sources of %1 in %2").arg(nodeList(nodes), folder));
    return true;
}

bool MainWindow::confirmDropEdits(const QString &action)
{
    const QList<qint64> drafts = m_candidate->draftNodes();
    if (drafts.isEmpty())
        return true;
    QMessageBox box(QMessageBox::Warning, tr("Unsaved edits"),
                    tr("The editor holds unsaved edits of %1. %2 drops them: an edit is in the session only once "
                       "Re-benchmark has recorded it.")
                        .arg(nodeList(drafts), action),
                    QMessageBox::NoButton, this);
    box.setObjectName(QStringLiteral("unsavedEdits"));
    QPushButton *save =
        box.addButton(drafts.size() == 1 ? tr("Save edited source as .cu…") : tr("Save edited sources as .cu…"),
                      QMessageBox::AcceptRole);
    save->setObjectName(QStringLiteral("saveEdits"));
    box.addButton(tr("Discard edits"), QMessageBox::DestructiveRole)->setObjectName(QStringLiteral("discardEdits"));
    box.addButton(QMessageBox::Cancel)->setObjectName(QStringLiteral("keepEditing"));
    box.setDefaultButton(save);
    box.exec();
    const QMessageBox::ButtonRole role = box.buttonRole(box.clickedButton());
    if (role == QMessageBox::AcceptRole)
        return saveSourcesAsked(drafts);
    return role == QMessageBox::DestructiveRole;
}

void MainWindow::closeSession()
{
    m_engine->closeSession();
    m_session.reset();
    setSession(nullptr, false);
}

void MainWindow::closeEvent(QCloseEvent *e)
{
    if (!confirmDropEdits(tr("Quitting"))) {
        e->ignore();
        return;
    }
    // Every result is in the session file already; a running search is cancelled and keeps them.
    if (m_engine->searching())
        m_engine->cancel();
    m_settings->setWindow(saveGeometry(), saveState(Settings::kWindowStateVersion));
    m_settings->setSearchSettings(m_search->settings());
    m_settings->setGenerator(m_search->generator());
    for (const GeneratorChoice &c : m_search->generatorChoices())
        m_settings->setGeneratorChoice(c);
    e->accept();
}

void MainWindow::showHelpDialog(QDialog *&dialog, const QString &name, const QString &title, const QString &html)
{
    // Not modal: a list of shortcuts can stay open beside the window.
    if (!dialog) {
        dialog = new QDialog(this);
        dialog->setObjectName(name);
        dialog->setWindowTitle(title);
        auto *text = new QTextBrowser(dialog);
        text->setOpenExternalLinks(true);
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
        connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::hide);
        auto *l = new QVBoxLayout(dialog);
        l->addWidget(text);
        l->addWidget(buttons);
        dialog->resize(520, 420);
    }
    dialog->findChild<QTextBrowser *>()->setHtml(html);
    dialog->show();
    dialog->raise();
}

void MainWindow::openDocumentation(const QString &page)
{
    const QString file = documentationFile(page);
    if (file.isEmpty()) {
        showError(tr("Documentation"),
                  tr("%1 is neither installed (share/doc/kernelforge) nor in a source tree here").arg(page));
        return;
    }
    if (!QDesktopServices::openUrl(QUrl::fromLocalFile(file)))
        showError(tr("Documentation"), tr("no program here opens %1").arg(file));
}

} // namespace kf::ui
