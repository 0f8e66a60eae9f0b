#!/usr/bin/env node
// Committed launcher: npm links workspace bins before `prepare` builds dist/, so the bin must
// be a file that exists at install time. It only loads the compiled command.
import '../dist/bin.js';
