// The admin token for this browser tab only: sessionStorage ends with the tab, and the token is
// never put in a URL, a cookie or localStorage.
const KEY = 'herald.console.adminToken';

export const currentToken = (): string => sessionStorage.getItem(KEY) ?? '';
export const keepToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const forgetToken = (): void => sessionStorage.removeItem(KEY);
