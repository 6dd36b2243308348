// Package archtest holds tests that keep the repository's shape: every
// package has a doc comment, and imports point only the way STYLE.md's
// dependency direction allows (cmd → bot → {agent, adapters}, agent →
// {tools, risk}; risk and tools know nothing of chat, Redis or the LLM).
package archtest
