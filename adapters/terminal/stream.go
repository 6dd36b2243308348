package terminal

import (
	"context"
	"strings"

	"github.com/countersign/countersign/adapters"
)

var _ adapters.TaskStream = (*Terminal)(nil)

// StartStream starts a turn's stream: the terminal prints the model's
// words as they come and each task as a line when its state or details
// change; a task that is sent again unchanged prints nothing.
func (t *Terminal) StartStream(_ context.Context, _ adapters.Place, _ adapters.User) (adapters.Stream, error) {
	return &stream{t: t, last: map[string]string{}}, nil
}

// stream is one turn's stream on the terminal.
type stream struct {
	t    *Terminal
	last map[string]string // task id → the line printed for it last
}

func (s *stream) Text(_ context.Context, markdown string) error {
	if strings.TrimSpace(markdown) == "" {
		return nil
	}
	s.answered()
	return s.t.print(renderText(markdown, s.t.paint))
}

func (s *stream) Task(_ context.Context, task adapters.Task) error {
	line := taskLine(task, s.t.paint)
	if s.last[task.ID] == line {
		return nil
	}
	s.last[task.ID] = line
	s.answered()
	return s.t.print(line)
}

func (s *stream) Stop(ctx context.Context, final string) error {
	return s.Text(ctx, final)
}

// answered counts what the stream printed as the bot's answer, for Pace.
func (s *stream) answered() {
	s.t.mu.Lock()
	s.t.answerLocked()
	s.t.mu.Unlock()
}

// taskMarks are the marks of the task states on a task line.
var taskMarks = map[adapters.TaskState]string{
	adapters.TaskPending:    "○",
	adapters.TaskInProgress: "◐",
	adapters.TaskComplete:   "✓",
	adapters.TaskError:      "✗",
}

// taskLine is a task as one line: "▸ ✓ df -h: exit code 0 in 12ms
// (pending) [card m3]".
func taskLine(task adapters.Task, paint painter) string {
	var b strings.Builder
	b.WriteString("▸ " + taskMarks[task.State] + " " + paint(bold, sanitize(oneLine(task.Title))))
	if task.Details != "" {
		b.WriteString(": " + sanitize(oneLine(task.Details)))
	}
	b.WriteString(paint(dim, " ("+string(task.State)+")"))
	if task.CardRef != "" {
		b.WriteString(paint(dim, " [card "+sanitize(task.CardRef)+"]"))
	}
	return b.String()
}

// oneLine joins s's lines with " ⏎ " so a task stays one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ⏎ ")
}
