/**
 * A custom CodemodeConnector for the runtime tests: a ledger whose reads and writes count how often
 * they really ran, so a test tells a replayed call from a re-executed one. `deposit` needs approval
 * and can be reverted; `note` is a write that needs none, also revertable.
 */
import { CodemodeConnector } from '@cloudflare/codemode';

export interface LedgerBook {
  balance: number;
  notes: string[];
  /** How many times each tool really executed. */
  ran: Record<string, number>;
  /** Every revert, in the order the runtime asked for them. */
  reverted: string[];
  /** Runs in place of a deposit when set: how a test holds a write in flight. */
  onDeposit?: () => Promise<never>;
}

export function newBook(balance = 100): LedgerBook {
  return { balance, notes: [], ran: {}, reverted: [] };
}

const AMOUNT = { type: 'object' as const, properties: { amount: { type: 'number' as const } }, required: ['amount'] };
const TEXT = { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] };

export function ledgerConnector(book: LedgerBook): CodemodeConnector {
  const count = (tool: string) => {
    book.ran[tool] = (book.ran[tool] ?? 0) + 1;
  };
  class Ledger extends CodemodeConnector {
    name() {
      return 'ledger';
    }
    tools() {
      return {
        balance: {
          description: 'The current balance',
          execute: () => {
            count('balance');
            return book.balance;
          },
        },
        deposit: {
          description: 'Add an amount to the balance',
          inputSchema: AMOUNT,
          requiresApproval: true,
          execute: (args: unknown) => {
            count('deposit');
            if (book.onDeposit) return book.onDeposit();
            book.balance += (args as { amount: number }).amount;
            return book.balance;
          },
          revert: (args: unknown) => {
            book.reverted.push(`deposit ${(args as { amount: number }).amount}`);
            book.balance -= (args as { amount: number }).amount;
          },
        },
        note: {
          description: 'Keep a note',
          inputSchema: TEXT,
          execute: (args: unknown) => {
            count('note');
            book.notes.push((args as { text: string }).text);
            return book.notes.length;
          },
          revert: (args: unknown) => {
            book.reverted.push(`note ${(args as { text: string }).text}`);
            book.notes.splice(book.notes.indexOf((args as { text: string }).text), 1);
          },
        },
      };
    }
  }
  // The runtime's connectors are constructed as a Worker constructs an entrypoint; neither is used in Node.
  return new Ledger({} as never, {});
}
