// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_screen.h"

#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/layout/layout_spec.h"
#include "partalign/layout/plan_render.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

PlannerScreen::PlannerScreen(PlannerModel model, std::vector<TopologyProfile> profiles,
                             ToolVersions versions)
    : model_(std::move(model)),
      profiles_(std::move(profiles)),
      versions_(versions),
      shown_(model_.disk().device.topology),
      loaded_(model_.layout()) {}

void PlannerScreen::Replace(PlannerModel model) {
  model_ = std::move(model);
  undo_.clear();
  selected_ = 0;
  profile_.reset();
  shown_ = model_.disk().device.topology;
  loaded_ = model_.layout();
  exported_.reset();
}

bool PlannerScreen::HasUnsavedEdits() const {
  return !(model_.layout() == loaded_) && !(exported_ && *exported_ == model_.layout());
}

std::string PlannerScreen::profile_name() const {
  return profile_ ? profiles_[*profile_].name : std::string();
}

std::string PlannerScreen::profile_description() const {
  return profile_ ? profiles_[*profile_].description : std::string();
}

std::optional<PlannerRow> PlannerScreen::SelectedRow() const {
  std::vector<PlannerRow> rows = model_.Rows();
  if (rows.empty()) return std::nullopt;
  return rows[std::min(selected_, rows.size() - 1)];
}

void PlannerScreen::ClampSelection() {
  const size_t rows = model_.Rows().size();
  selected_ = rows == 0 ? 0 : std::min(selected_, rows - 1);
}

void PlannerScreen::SelectPartitionAt(uint64_t start_bytes) {
  std::vector<PlannerRow> rows = model_.Rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].free && rows[i].start_bytes == start_bytes) selected_ = i;
  }
  if (!rows.empty()) selected_ = std::min(selected_, rows.size() - 1);
}

std::string PlannerScreen::PromptText() const {
  std::optional<PlannerRow> row = SelectedRow();
  const uint64_t free = row ? row->end_bytes - row->start_bytes : 0;
  const PlannedPartition* part =
      row && !row->free ? &model_.layout().partitions.at(row->index) : nullptr;
  switch (prompt_) {
    case PromptKind::kNewSize:
      return fmt::format("Size (512M, 1.5G, 25%, N sectors; Enter = all {} free): ",
                         FormatSize(free));
    case PromptKind::kNewType:
      return "Type (linux, swap, uefi, home, raid, lvm, bios, a GUID or DOS byte; Enter = linux): ";
    case PromptKind::kType:
      return fmt::format(
          "Type (linux, swap, uefi, home, raid, lvm, bios, a GUID or DOS byte; Enter = linux; "
          "now {}): ",
          part ? PartitionTypeName(model_.layout().label, part->type) : "-");
    case PromptKind::kResize:
      return fmt::format("New size (Enter = keep {}, snapped to the grain): ", FormatSize(free));
    case PromptKind::kMove:
      return fmt::format(
          "New start (50M, N sectors; Enter = the nearest aligned start with room; now {}): ",
          part ? FormatSize(part->start_bytes) : "-");
    case PromptKind::kExportPath:
      return "Export to (.json plan file, .sfdisk script, .md report): ";
    case PromptKind::kConfirmWrite:
      return fmt::format("Type yes to write this table to '{}': ",
                         model_.disk().device.identity.path);
    case PromptKind::kConfirmQuit:
      return fmt::format("Quit? {} not written to '{}'. y quits, any other key stays: ",
                         model_.ChangeSummary(), model_.disk().device.identity.path);
    case PromptKind::kConfirmMakeRoom: {
      std::string offer;
      if (room_offer_) {
        for (const std::string& l : room_offer_->lines) offer += l + ". ";
      }
      const bool several = room_offer_ && room_offer_->shrinks.size() > 1;
      return offer + fmt::format(
                         "Make room? y shrinks {} in the layout and aligns every "
                         "partition (A); w then applies it with apply --make-room; any "
                         "other key leaves the layout as it is: ",
                         several ? "them" : "it");
    }
  }
  return "";
}

void PlannerScreen::Open(PromptKind kind) {
  mode_ = PlannerMode::kPrompt;
  prompt_ = kind;
  input_.clear();
  message_.clear();
}

bool PlannerScreen::Edit(const std::function<Status(PlannerModel&)>& edit) {
  message_.clear();
  PlannerLayout before = model_.layout();
  Status s = edit(model_);
  if (!s) {
    message_ = s.error().message;
    return false;
  }
  undo_.push_back(std::move(before));
  return true;
}

void PlannerScreen::CycleTopology() {
  if (!profile_) {
    profile_ = 0;
  } else if (*profile_ + 1 < profiles_.size()) {
    ++*profile_;
  } else {
    profile_.reset();
  }
  const Topology& base = model_.disk().device.topology;
  shown_ = base;
  if (profile_) {
    Result<TopologyOverride> o = ParseTopologySpec(profiles_[*profile_].spec, profiles_);
    Result<Topology> t = o ? ApplyOverride(base, *o) : Result<Topology>(o.error());
    if (!t) {
      message_ = fmt::format("profile '{}': {}", profiles_[*profile_].name, t.error().message);
      profile_.reset();
      return;
    }
    shown_ = *t;
    message_ = fmt::format("verdicts as if on {} ({}); the plan keeps the disk's own topology",
                           profile_name(), profile_description());
  } else {
    message_ = "verdicts on the disk's own topology";
  }
}

PlannerEffect PlannerScreen::Quit(const Key& key) {
  const std::string how = key.code == KeyCode::kInterrupt ? "Ctrl-C" : std::string(1, key.ch);
  if (HasUnsavedEdits()) {
    quit_key_ = how;
    Open(PromptKind::kConfirmQuit);
    return {};
  }
  return {PlannerEffect::Kind::kQuit, "", how, std::nullopt, ""};
}

PlannerEffect PlannerScreen::Handle(const Key& key) {
  if (mode_ == PlannerMode::kPrompt && prompt_ == PromptKind::kConfirmQuit) {
    mode_ = PlannerMode::kList;
    if ((key.code == KeyCode::kChar && (key.ch == 'y' || key.ch == 'Y')) ||
        key.code == KeyCode::kInterrupt) {
      return {PlannerEffect::Kind::kQuit, "",
              key.code == KeyCode::kInterrupt ? "Ctrl-C" : quit_key_, std::nullopt,
              model_.ChangeSummary()};
    }
    message_ = "not quit: the layout is as it was";
    return {};
  }
  if (mode_ == PlannerMode::kPrompt && prompt_ == PromptKind::kConfirmMakeRoom) {
    mode_ = PlannerMode::kList;
    std::optional<PlannerModel::RoomOffer> offer = std::move(room_offer_);
    room_offer_.reset();
    if (key.code == KeyCode::kChar && (key.ch == 'y' || key.ch == 'Y') && offer) {
      if (Edit([&](PlannerModel& m) { return m.MakeRoom(*offer); })) {
        ClampSelection();
        message_ = "room made: every partition where partalign plan --make-room puts it: " +
                   model_.ChangeSummary();
      }
      return {};
    }
    if (key.code != KeyCode::kInterrupt) {
      message_ = "no room made: the layout is as it was";
      return {};
    }
  }
  if (key.code == KeyCode::kInterrupt) {
    // Ctrl-C leaves from anywhere, asking first when edits would be lost.
    mode_ = PlannerMode::kList;
    return Quit(key);
  }
  switch (mode_) {
    case PlannerMode::kHelp:
    case PlannerMode::kPlacement:
    case PlannerMode::kExplain:
      // Up/Down scroll a page longer than the terminal (DrawPlanner clamps the line); any
      // other key returns to the list.
      if (key.code == KeyCode::kDown) {
        ++page_line_;
      } else if (key.code == KeyCode::kUp) {
        page_line_ = page_line_ > 0 ? page_line_ - 1 : 0;
      } else {
        mode_ = PlannerMode::kList;
      }
      return {};
    case PlannerMode::kPrompt:
      if (key.code == KeyCode::kEscape) {
        mode_ = PlannerMode::kList;
        message_ = "cancelled";
      } else if (key.code == KeyCode::kBackspace) {
        if (!input_.empty()) input_.pop_back();
      } else if (key.code == KeyCode::kEnter) {
        return Submit();
      } else if (key.code == KeyCode::kChar && std::isprint(static_cast<unsigned char>(key.ch))) {
        input_ += key.ch;
      }
      return {};
    case PlannerMode::kList:
      return HandleList(key);
  }
  return {};
}

PlannerEffect PlannerScreen::HandleList(const Key& key) {
  const size_t rows = model_.Rows().size();
  std::optional<PlannerRow> row = SelectedRow();
  if (key.code == KeyCode::kUp) {
    if (selected_ > 0) --selected_;
    return {};
  }
  if (key.code == KeyCode::kDown) {
    if (selected_ + 1 < rows) ++selected_;
    return {};
  }
  if (key.code == KeyCode::kEscape) {
    message_.clear();
    return {};
  }
  if (key.code != KeyCode::kChar) return {};
  switch (key.ch) {
    case 'n':
      if (!row || !row->free) {
        message_ = "select free space (a 'free' line) for a new partition";
      } else if (row->inside_extended) {
        message_ = kInsideExtendedText;
      } else {
        Open(PromptKind::kNewSize);
      }
      break;
    case 'd':
      if (row) {
        const size_t discarded = model_.layout().discarded.size();
        if (Edit([&](PlannerModel& m) { return m.Delete(*row); })) {
          if (model_.layout().discarded.size() > discarded) {
            const uint32_t n = model_.layout().partitions.at(row->index).number;
            message_ = fmt::format(
                "partition {}'s contents are given up (as 'plan --discard {}'): A aligns the "
                "others using its space; it stays, empty (mkswap or mkfs it after w)",
                n, n);
          } else {
            message_ = fmt::format("deleted the partition at {}", FormatSize(row->start_bytes));
          }
          ClampSelection();
        }
      }
      break;
    case 'r':
    case 'm':
      if (!row || row->free) {
        message_ = "select a partition";
      } else {
        Open(key.ch == 'r' ? PromptKind::kResize : PromptKind::kMove);
      }
      break;
    case 't':
      if (!row || row->free) {
        message_ = "select a partition";
      } else if (Status can = model_.CanSetType(*row); !can) {
        // Said now, not after a prompt that promises a type.
        message_ = can.error().message;
      } else {
        Open(PromptKind::kType);
      }
      break;
    case 'A':
      if (Edit([&](PlannerModel& m) { return m.AlignAll(); })) {
        ClampSelection();
        message_ = "every partition where partalign plan puts it: " + model_.ChangeSummary();
      }
      break;
    case 'M': {
      Result<PlannerModel::RoomOffer> offer = model_.OfferRoom();
      if (!offer) {
        message_ = offer.error().message;
      } else {
        room_offer_ = std::move(*offer);
        Open(PromptKind::kConfirmMakeRoom);
      }
      break;
    }
    case 'x':
      mode_ = PlannerMode::kExplain;
      page_line_ = 0;
      break;
    case 'a':
      CycleTopology();
      break;
    case 'p':
      mode_ = PlannerMode::kPlacement;
      page_line_ = 0;
      break;
    case 'u':
      if (undo_.empty()) {
        message_ = "nothing to undo";
      } else {
        model_.set_layout(std::move(undo_.back()));
        undo_.pop_back();
        ClampSelection();
        message_ = "undone";
      }
      break;
    case 'e':
      Open(PromptKind::kExportPath);
      break;
    case 'w': {
      Result<Plan> plan = model_.MakePlan();
      if (!plan) {
        message_ = "cannot write: " + plan.error().message;
      } else {
        Open(PromptKind::kConfirmWrite);
      }
      break;
    }
    case 'q':
      return Quit(key);
    case '?':
      mode_ = PlannerMode::kHelp;
      page_line_ = 0;
      break;
    default:
      message_ = fmt::format("'{}' is not a key here; ? shows the keys", key.ch);
  }
  return {};
}

PlannerEffect PlannerScreen::Submit() {
  mode_ = PlannerMode::kList;
  std::optional<PlannerRow> row = SelectedRow();
  const std::string text = input_;
  switch (prompt_) {
    case PromptKind::kNewSize: {
      // Check the size now, on a copy, so that a bad one is said before the type is asked.
      PlannerModel trial = model_;
      if (Status s = trial.Add(*row, text, ""); !s) {
        message_ = s.error().message;
        return {};
      }
      pending_size_ = text;
      Open(PromptKind::kNewType);
      return {};
    }
    case PromptKind::kNewType: {
      if (Edit([&](PlannerModel& m) { return m.Add(*row, pending_size_, text); })) {
        // On the free space after it, if any, so that the next `n` goes there.
        SelectPartitionAt(row->start_bytes);
        std::vector<PlannerRow> rows = model_.Rows();
        if (selected_ + 1 < rows.size() && rows[selected_ + 1].free) ++selected_;
        message_ = "new partition at " + FormatSize(row->start_bytes);
      }
      return {};
    }
    case PromptKind::kResize: {
      const uint64_t index_start = row->start_bytes;
      if (Edit([&](PlannerModel& m) { return m.Resize(*row, text); })) {
        const PlannedPartition& p = model_.layout().partitions.at(row->index);
        SelectPartitionAt(p.start_bytes);
        message_ = fmt::format("partition {}: {} at {}{}", p.number, FormatSize(p.size_bytes),
                               FormatSize(p.start_bytes),
                               p.start_bytes != index_start ? " (start moved to the grain)" : "");
      }
      return {};
    }
    case PromptKind::kMove: {
      const uint64_t was = row->start_bytes;
      if (Edit([&](PlannerModel& m) { return m.Move(*row, text); })) {
        const PlannedPartition& p = model_.layout().partitions.at(row->index);
        SelectPartitionAt(p.start_bytes);
        message_ = p.start_bytes == was
                       ? fmt::format("partition {} stays at {}", p.number, FormatSize(was))
                       : fmt::format("partition {}: {} at {} (was at {}); {}", p.number,
                                     FormatSize(p.size_bytes), FormatSize(p.start_bytes),
                                     FormatSize(was), model_.ChangeOf(p).text);
      }
      return {};
    }
    case PromptKind::kType:
      if (Edit([&](PlannerModel& m) { return m.SetType(*row, text); })) {
        const PlannedPartition& p = model_.layout().partitions.at(row->index);
        message_ = fmt::format("partition {}: type {}", p.number,
                               PartitionTypeName(model_.layout().label, p.type));
      }
      return {};
    case PromptKind::kConfirmQuit:
    case PromptKind::kConfirmMakeRoom:
      return {};
    case PromptKind::kExportPath: {
      if (text.empty()) {
        message_ = "cancelled";
        return {};
      }
      const bool script = EndsWith(text, ".sfdisk");
      Result<Plan> applicable = model_.MakePlan();
      // An sfdisk script is for review: it is exported even when apply would refuse the
      // layout, and says so at its top.
      Result<Plan> plan = script ? model_.ReviewPlan() : applicable;
      if (!plan) {
        message_ = "cannot export: " + plan.error().message;
        return {};
      }
      std::string content;
      if (script && !applicable) {
        content = fmt::format(
            "# For review only: partalign apply refuses this layout ({}).\n"
            "# Writing it with sfdisk replaces the table and loses those partitions' data.\n",
            applicable.error().message);
      }
      if (EndsWith(text, ".json")) {
        content = PlanToJson(*plan).dump(2) + "\n";
      } else if (EndsWith(text, ".sfdisk")) {
        Result<std::string> rendered = RenderSfdiskScript(*plan, model_.disk().table);
        if (!rendered) {
          message_ = "cannot export: " + rendered.error().message;
          return {};
        }
        content += *rendered;
      } else if (EndsWith(text, ".md")) {
        // No command makes a plan the planner made: it is exported as a plan file.
        content = RenderPlanMarkdown(
            *plan, model_.disk().table,
            {"",
             "Export the same plan from the planner as a plan file (`e`, then a name ending in "
             "`.json`, such as `plan.json`)",
             "plan.json"});
      } else {
        message_ = fmt::format("'{}': the name must end in .json, .sfdisk or .md", text);
        return {};
      }
      return {PlannerEffect::Kind::kWriteFile, text, std::move(content), std::nullopt};
    }
    case PromptKind::kConfirmWrite: {
      if (text != "yes") {
        message_ = "not confirmed: nothing was written";
        return {};
      }
      Result<Plan> plan = model_.MakePlan();
      if (!plan) {
        message_ = "cannot write: " + plan.error().message;
        return {};
      }
      return {PlannerEffect::Kind::kApply, "", "", std::move(*plan)};
    }
  }
  return {};
}

}  // namespace partalign
